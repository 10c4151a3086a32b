import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { capturingLogger } from '../../support/capturing-logger.ts';
import { holdRuns, type HeldRows } from '../../support/held-rows.ts';
import { parkedWaiters } from '../../support/parked-waiters.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';

/**
 * ADR 0137. A run whose row another session holds for good (an operator's psql left in a transaction, a
 * host's transaction that hung) is passed over by every monitor sweep (ADR 0135), and its row cannot carry
 * a stuck reason. Before this, nothing but an info log said so: an overdue run stayed unexpired with no
 * reason anywhere on-call looks. Now, held across sweeps for a minute of the engine's clock, it is
 * journaled `run_held` on the run, once per ten minutes, and the sweep goes on; once let go it is expired.
 */
describe('a run the monitor keeps finding held is journaled (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let held: HeldRows | undefined;
  const capture = capturingLogger();
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    t = await createTestEngine({
      db,
      flows: [waiter],
      actions,
      logger: capture.logger,
      config: { sweeps: { held_run_wait_ms: 200 } },
    });
  });
  afterAll(async () => {
    await held?.rollback().catch(() => undefined);
    await t?.close();
    await db?.close();
  });

  const journaled = (runId: string) =>
    db.prisma.anomalyLog.findMany({ where: { run_id: runId, code: 'run_held' }, orderBy: { id: 'asc' } });

  it('held for a minute across sweeps: one run_held entry naming the sweep and what to do; expired once let go', async () => {
    const [runId, free] = await parkedWaiters(t, [60, 90]);
    t.clock.advance(300_000);
    held = await holdRuns(db.url!, [runId!]);

    // Held for less than a minute: passed over, not journaled (a worker's round holds a run for a moment).
    const first = await t.engine.sweepExpiredRuns();
    t.clock.advance(30_000);
    const second = await t.engine.sweepExpiredRuns();
    const early = await journaled(runId!);
    // A minute and more: journaled once, and not again on the next sweep.
    t.clock.advance(31_000);
    const third = await t.engine.sweepExpiredRuns();
    t.clock.advance(60_000);
    await t.engine.sweepExpiredRuns();
    const entries = await journaled(runId!);
    await held.rollback();
    held = undefined;
    const afterRelease = await t.engine.sweepExpiredRuns();

    expect({
      first: first.expired,
      second: second.expired,
      third: third.expired,
      early: early.length,
      entries: entries.map((e) => ({
        site: e.site,
        sweep: (e.details as { sweep?: string }).sweep,
        heldSeconds: (e.details as { held_seconds?: number }).held_seconds,
        saysWhatToDo: e.message.includes("pg_stat_activity, state 'idle in transaction'"),
        namesRun: e.message.includes(runId!),
      })),
      warned: capture.lines.filter((l) => l.level === 40 && l.runId === runId).length,
      afterRelease: afterRelease.expired,
      left: (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId! } })).expired_at !== null,
    }).toEqual({
      first: [free],
      second: [],
      third: [],
      early: 0,
      entries: [{ site: 'monitor.run', sweep: 'expiry', heldSeconds: 61, saysWhatToDo: true, namesRun: true }],
      warned: 1,
      afterRelease: [runId],
      left: true,
    });
  }, 60_000);
});
