import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { holdRuns, type HeldRows } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, holding, waiter } from '../../repairs/support/repair-fixtures.ts';
import { seedOrphans } from '../review62/support/orphans.ts';

/**
 * Review 64, HELD (ADR 0137 through the owner_gone sweep, several runs at once): four runs each with a step
 * Running under a gone worker (seeded as review 62 does); another session holds three of them for good.
 * Monitor passes (doctor off) at 0 s, 30 s, 61 s, 121 s: the free run is marked owner_gone at the first pass;
 * each held run gets exactly one `run_held` entry (sweep owner_gone), at the 61 s pass, none at 121 s; once
 * let go, the next pass marks them.
 */
describe('held: several orphaned runs held for good are each journaled once (postgres)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let held: HeldRows | undefined;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    t = await createTestEngine({
      db,
      flows: [waiter, holding],
      actions,
      config: { sweeps: { held_run_wait_ms: 200 } },
    });
    await t.engine.stopWorkers();
  });
  afterAll(async () => {
    await held?.rollback().catch(() => undefined);
    await t?.close();
    await db?.close();
  });

  it('one entry per held run after a minute; the free one marked at once; all marked once let go', async () => {
    const runs = await seedOrphans(db, { count: 4, repairCount: 0, goneMinutesAgo: 30 });
    const heldRuns = runs.slice(0, 3);
    const free = runs[3]!;
    held = await holdRuns(db.url!, heldRuns);
    const counts: number[] = [];
    const marked: number[] = [];
    for (const step of [0, 30_000, 31_000, 60_000]) {
      t.clock.advance(step);
      const pass = await t.engine.monitorPass({ doctor: false });
      marked.push(pass.swept ? pass.orphans.marked : -1);
      counts.push(await db.prisma.anomalyLog.count({ where: { code: 'run_held' } }));
    }
    const entries = await db.prisma.anomalyLog.findMany({ where: { code: 'run_held' } });
    await held.rollback();
    held = undefined;
    const after = await t.engine.monitorPass({ doctor: false });
    const reasons = await db.prisma.flowRun.findMany({ where: { id: { in: runs } }, select: { stuck_reason: true } });
    expect({
      marked,
      counts,
      perRun: heldRuns.map((id) => entries.filter((e) => e.run_id === id).length),
      sweeps: [...new Set(entries.map((e) => (e.details as { sweep?: string }).sweep))],
      freeJournaled: entries.some((e) => e.run_id === free),
      afterRelease: after.swept ? after.orphans.marked : -1,
      allMarked: reasons.every((r) => r.stuck_reason?.startsWith('owner_gone')),
    }).toEqual({
      marked: [1, 0, 0, 0],
      counts: [0, 0, 3, 3],
      perRun: [1, 1, 1],
      sweeps: ['owner_gone'],
      freeJournaled: false,
      afterRelease: 3,
      allMarked: true,
    });
  }, 30_000);
});
