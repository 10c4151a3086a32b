import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { capturingLogger } from '../../support/capturing-logger.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, holding } from '../../repairs/support/repair-fixtures.ts';
import { seedOrphans } from './support/orphans.ts';

/**
 * Review 62 (ADR 0135 §2: "The bound on one sweep's waiting is the allowance plus 100 ms per held run met
 * after it"; §1: a run still held past its wait is passed over; ADR 0134: a row held for good, an
 * operator's psql, must not hold up the monitor).
 *
 * Attacked: the same hold one level down. Ten runs' orphaned steps (ADR 0010) are held by one other
 * session (an operator's `select … from sagaflow.action_runs where status = 'Running' … for update` left
 * open in psql, or a worker frozen mid-write); the runs' own rows are free. The doctor's R4 takes each run's
 * row at once (nothing of the allowance spent), then waits for the held step row for `monitorLockWaitMs`
 * (1 s), which is not counted in the sweep's allowance. How long does one doctor pass wait?
 */
const HELD = 10;
/** The ADR's bound: the 1 s allowance, then 100 ms per further held run. */
const BOUND_MS = 1_000 + 100 * HELD;
/** Room for the pass's own statements on a loaded machine (the control pass below takes well under it). */
const SLACK_MS = 1_500;

describe('review 62: one doctor pass over orphaned steps another session holds (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let holder: pg.Client | undefined;
  const capture = capturingLogger();
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    t = await createTestEngine({ db, flows: [holding], actions, logger: capture.logger });
  });
  afterAll(async () => {
    await holder?.query('rollback').catch(() => undefined);
    await holder?.end().catch(() => undefined);
    await t?.close();
    await db?.close();
  });

  it('passes over the held steps within the allowance plus 100 ms each, and reclaims the free one', async () => {
    const heldRuns = await seedOrphans(db, { count: HELD, repairCount: 0, goneMinutesAgo: 60 });
    const [free] = await seedOrphans(db, { count: 1, repairCount: 0, goneMinutesAgo: 10 });
    holder = new pg.Client({ connectionString: db.url! });
    await holder.connect();
    await holder.query('begin');
    await holder.query(`select id from sagaflow.action_runs where run_id = any($1::uuid[]) for update`, [heldRuns]);

    const started = performance.now();
    const pass = await t.engine.sweepDoctor();
    const tookMs = Math.round(performance.now() - started);
    const passedOver = capture.lines.filter(
      (l) => typeof l.msg === 'string' && l.msg.startsWith('doctor: run '),
    ).length;
    const waited = capture.lines
      .filter((l) => typeof l.msg === 'string' && l.msg.startsWith('doctor: run '))
      .map((l) => l.waitedMs);
    const seen = { tookMs, boundMs: BOUND_MS, passedOver, loggedWaitedMs: waited, redispatched: pass.redispatched };
    expect(
      {
        reclaimedFree: pass.redispatched.some((r) => r.runId === free),
        passedOver,
        withinBound: tookMs <= BOUND_MS + SLACK_MS,
      },
      JSON.stringify(seen),
    ).toEqual({ reclaimedFree: true, passedOver: HELD, withinBound: true });
  }, 60_000);
});
