import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { capturingLogger } from '../../support/capturing-logger.ts';
import { holdRuns, type HeldRows } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, holding, waiter } from '../../repairs/support/repair-fixtures.ts';
import { seedOrphans } from '../review62/support/orphans.ts';

/**
 * Review 64, HELD (ADR 0137: "a sweep that takes the run … forgets it"), the contrast to
 * a-run-held-once-and-again-minutes-later-is-not-held-for-good: the same schedule, but the pass at 30 s
 * takes the run (the owner_gone sweep marks it) instead of not visiting it. The hold at 95 s, at one expiry
 * sweep, is then counted from 95 s: nothing is journaled, and the next sweep expires the run.
 */
describe('held: a run taken by a sweep between two momentary holds is forgotten (postgres)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let held: HeldRows | undefined;
  const capture = capturingLogger();
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    t = await createTestEngine({
      db,
      flows: [waiter, holding],
      actions,
      logger: capture.logger,
      config: { sweeps: { held_run_wait_ms: 200 } },
    });
    await t.engine.stopWorkers();
  });
  afterAll(async () => {
    await held?.rollback().catch(() => undefined);
    await t?.close();
    await db?.close();
  });

  it('held at 0 s, taken at 30 s, held at 95 s for one sweep: nothing journaled', async () => {
    const [runId] = await seedOrphans(db, { count: 1, repairCount: 0, goneMinutesAgo: 30 });
    const deadline = new Date(t.clock.now().getTime() + 90_000);
    await db.prisma.flowRun.update({ where: { id: runId! }, data: { expires_at: deadline } });

    held = await holdRuns(db.url!, [runId!]);
    const first = await t.engine.monitorPass({ doctor: false });
    await held.rollback();
    held = undefined;

    t.clock.advance(30_000);
    const second = await t.engine.monitorPass({ doctor: false });

    t.clock.advance(65_000);
    held = await holdRuns(db.url!, [runId!]);
    const heldSweep = await t.engine.sweepExpiredRuns();
    await held.rollback();
    held = undefined;
    const freeSweep = await t.engine.sweepExpiredRuns();

    const entries = await db.prisma.anomalyLog.count({ where: { run_id: runId!, code: 'run_held' } });
    expect({
      firstMarked: first.swept ? first.orphans.marked : -1,
      secondMarked: second.swept ? second.orphans.marked : -1,
      heldSweep: heldSweep.expired,
      freeSweep: freeSweep.expired,
      entries,
      warned: capture.lines.filter((l) => l.level === 40 && l.runId === runId).length,
    }).toEqual({ firstMarked: 0, secondMarked: 1, heldSweep: [], freeSweep: [runId], entries: 0, warned: 0 });
  }, 30_000);
});
