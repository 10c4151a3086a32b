import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { capturingLogger } from '../../support/capturing-logger.ts';
import { holdRuns, type HeldRows } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, holding, waiter } from '../../repairs/support/repair-fixtures.ts';
import { seedOrphans } from '../review62/support/orphans.ts';

/**
 * Review 64, attacking ADR 0137: "A run held across sweeps for 60 s … is journaled `run_held`"; "no noise for
 * rows a worker holds for a moment"; "a sweep that takes the run, or finds it closed, forgets it".
 *
 * The memory forgets a run only when a monitor sweep of the same engine visits it again and takes it. A run
 * that a sweep found held once, and that then stops being any sweep's candidate (its step reclaimed by an
 * operator, a frozen worker beating again, its step finishing), is remembered with its first sighting as
 * `since` for as long as the engine lives. The next time any sweep finds it held, even for a moment and at its
 * very first sweep of a new episode, it is journaled at once as held "at each sweep for N s", N counted from
 * the old sighting.
 *
 * Schedule (engine clock; nothing else visits the run in between):
 * - 0 s: run R has a step Running under a worker that is gone (seeded as review 62 does) and a business
 *   deadline 90 s ahead. Its row is held for one monitor pass: the owner_gone sweep passes it over (held).
 *   Let go.
 * - An operator reclaims R's step (`engine.reclaimStep`): R is no longer orphaned, so no sweep visits it.
 * - 30 s: a monitor pass: R is nobody's candidate.
 * - 95 s: R is overdue. Its row is held for exactly one expiry sweep (a worker's moment), then let go, and the
 *   next sweep expires it.
 * Expected: no `run_held` entry, no warn: R was never found held at two sweeps in a row, let alone for a minute.
 */
describe('a run found held once, and again at one sweep minutes later, is not journaled held for good (postgres)', () => {
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

  it('two momentary holds 95 s apart, with the run taken by an operator in between, journal nothing', async () => {
    const [runId] = await seedOrphans(db, { count: 1, repairCount: 0, goneMinutesAgo: 30 });
    const deadline = new Date(t.clock.now().getTime() + 90_000);
    await db.prisma.flowRun.update({ where: { id: runId! }, data: { expires_at: deadline } });

    // 0 s: held for one pass; the owner_gone sweep passes it over.
    held = await holdRuns(db.url!, [runId!]);
    await t.engine.monitorPass({ doctor: false });
    await held.rollback();
    held = undefined;
    const afterFirst = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId! } });

    // An operator reclaims the step: the run is no longer orphaned.
    const reclaim = await t.engine.reclaimStep(runId!);

    // 30 s: a pass that has nothing to do with it.
    t.clock.advance(30_000);
    await t.engine.monitorPass({ doctor: false });

    // 95 s: overdue, and held for one expiry sweep only.
    t.clock.advance(65_000);
    held = await holdRuns(db.url!, [runId!]);
    const heldSweep = await t.engine.sweepExpiredRuns();
    await held.rollback();
    held = undefined;
    const freeSweep = await t.engine.sweepExpiredRuns();

    const entries = await db.prisma.anomalyLog.findMany({ where: { run_id: runId!, code: 'run_held' } });
    expect(
      {
        firstPassLeftIt: afterFirst.stuck_reason,
        reclaimed: reclaim.reclaimed,
        heldSweepExpired: heldSweep.expired,
        freeSweepExpired: freeSweep.expired,
        runHeld: entries.map((e) => ({ sweep: (e.details as { sweep?: string }).sweep, details: e.details })),
        warned: capture.lines.filter((l) => l.level === 40 && l.runId === runId).length,
      },
      JSON.stringify(entries.map((e) => e.message)),
    ).toEqual({
      firstPassLeftIt: null,
      reclaimed: true,
      heldSweepExpired: [],
      freeSweepExpired: [runId],
      runHeld: [],
      warned: 0,
    });
  }, 30_000);
});
