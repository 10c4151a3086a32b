import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, holding } from '../../repairs/support/repair-fixtures.ts';
import { seedOrphans } from '../review62/support/orphans.ts';

/**
 * Review 63, attacking ADR 0135's addendum §4 ("R4 reads only orphans of runs with repair budget left … A run
 * whose budget is spent keeps its `owner_gone` reason for an operator"): through the monitor's own pass
 * (`owner_gone`, stuck reasons, then the doctor), twice.
 */
describe('review 63: an orphaned step of a run out of repair budget (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 6 });
    t = await createTestEngine({ db, flows: [holding], actions, config: { repair: { enabled: true } } });
  });
  afterAll(async () => {
    await t?.close();
    await db?.close();
  });

  it('held: the spent run keeps its owner_gone reason across passes, and the run with budget left is reclaimed', async () => {
    const [spent] = await seedOrphans(db, { count: 1, repairCount: 5, goneMinutesAgo: 60 });
    const [fresh] = await seedOrphans(db, { count: 1, repairCount: 0, goneMinutesAgo: 10 });
    const passes = [];
    for (let i = 0; i < 2; i++) {
      const p = await t.engine.monitorPass({ doctor: true });
      const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: spent! } });
      passes.push({ swept: p.swept, stuckReason: run.stuck_reason, repairCount: run.repair_count });
    }
    const freeStep = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: fresh! } });
    const spentStep = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: spent! } });
    expect(
      {
        ownerGoneEachPass: passes.map((p) => p.swept && (p.stuckReason ?? '').startsWith('owner_gone:')),
        spentStepUntouched: spentStep.status === 'Running' && spentStep.reclaim_stale_at === null,
        freshReclaimed: freeStep.reclaim_stale_at !== null || freeStep.status !== 'Running',
      },
      JSON.stringify(passes),
    ).toEqual({ ownerGoneEachPass: [true, true], spentStepUntouched: true, freshReclaimed: true });
  }, 60_000);
});
