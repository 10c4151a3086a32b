import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { capturingLogger } from '../../support/capturing-logger.ts';
import { holdRuns, type HeldRows } from '../../support/held-rows.ts';
import { parkedWaiters } from '../../support/parked-waiters.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';

/**
 * Review 64, attacking ADR 0137 ("every stuck run is visible with its reason"; the brief's "is a run held for
 * good always journaled … doctor sweeps"). The doctor's R2 (seed 000: re-wake a run stuck Waiting) is a
 * set-based statement that skips a run another session holds (`for no key update skip locked`, review 58),
 * not `onMonitoredRun`, so a run it finds held is never noted: however long it stays held, nothing is
 * journaled, and the run, whose wake was lost, has no stuck reason either.
 *
 * A parked waiter whose signal wait timed out (due) and whose wake job was lost: the doctor's R2 candidate.
 * Another session holds its row for good. Monitor passes (doctor on) at 0 s, 30 s, 61 s and 121 s of the
 * engine's clock; then the row is let go and one more pass re-dispatches it (the run was R2's candidate all
 * along, only held). Expected, as for a run the expiry, the owner_gone sweep or the doctor's reclaim keeps
 * finding held: one `run_held` entry on the run once it has been held for a minute.
 */
describe('a run the doctor keeps finding held is journaled (postgres)', () => {
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
      config: { sweeps: { held_run_wait_ms: 200 }, repair: { enabled: true, grace_seconds: 60 } },
    });
  });
  afterAll(async () => {
    await held?.rollback().catch(() => undefined);
    await t?.close();
    await db?.close();
  });

  it('a lost wake on a run held for good: run_held after a minute of passes', async () => {
    const [runId] = await parkedWaiters(t, [864_000]);
    // Its wake was lost, and its signal wait (an hour) is due.
    await db.prisma.job.deleteMany({ where: { run_id: runId! } });
    t.clock.advance(3_700_000);
    held = await holdRuns(db.url!, [runId!]);

    const passes: string[][] = [];
    for (const step of [0, 30_000, 31_000, 60_000]) {
      t.clock.advance(step);
      const pass = await t.engine.monitorPass({ doctor: true });
      passes.push(pass.swept ? (pass.doctor?.redispatched ?? []).map((r) => r.rule) : ['not swept']);
    }
    const whileHeld = await db.prisma.anomalyLog.findMany({ where: { run_id: runId!, code: 'run_held' } });
    const row = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId! } });
    await held.rollback();
    held = undefined;
    const released = await t.engine.monitorPass({ doctor: true });

    expect({
      passes,
      stuckReason: row.stuck_reason,
      afterRelease: released.swept ? (released.doctor?.redispatched ?? []).map((r) => r.rule) : ['not swept'],
      runHeld: whileHeld.map((e) => ({ site: e.site, namesRun: e.message.includes(runId!) })),
    }).toEqual({
      passes: [[], [], [], []],
      stuckReason: null,
      afterRelease: ['R2'],
      runHeld: [{ site: 'monitor.run', namesRun: true }],
    });
  }, 30_000);
});
