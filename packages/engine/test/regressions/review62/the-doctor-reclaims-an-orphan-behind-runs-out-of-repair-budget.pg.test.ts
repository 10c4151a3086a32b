import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, holding } from '../../repairs/support/repair-fixtures.ts';
import { seedOrphans } from './support/orphans.ts';

/**
 * Review 62 (seed 000 "The doctor's active side", ADR 0010 R4: a step Running with no reclaim deadline under
 * a worker that is gone is reclaimed, within the run's repair budget, `repair.budget`; ADR 0026: a doctor
 * pass walks its candidates, it does not look at the same page for ever; invariant 3).
 *
 * Attacked: R4 reads ONE page of orphaned steps (`sweeps.batch_size`, 1,000 by default), stalest
 * `gone_since` first, with no keyset and no test of the run's budget, and skips a run whose budget is spent
 * inside its transaction. Runs that spent their budget keep their orphaned step (only an operator's kick or
 * reclaim moves them), so they accumulate at the head of that page. With 1,000 of them (seeded as a gone
 * worker leaves them: Running, no reclaim deadline, claimed by a worker with no row, an hour ago), is an
 * orphaned step of a run that has its whole budget, gone ten minutes ago, ever reclaimed?
 */
describe('review 62: the doctor with runs out of repair budget ahead of an orphan (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    // Out of the box: repair.budget 5, sweeps.batch_size 1000, worker.dead_after_seconds 30.
    t = await createTestEngine({ db, flows: [holding], actions });
  });
  afterAll(async () => {
    await t?.close();
    await db?.close();
  });

  it('control: the same orphaned step, seeded alone, is reclaimed by one pass', async () => {
    const [alone] = await seedOrphans(db, { count: 1, repairCount: 0, goneMinutesAgo: 10 });
    await t.engine.sweepDoctor();
    const step = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: alone! } });
    expect(step.reclaim_stale_at).not.toBeNull();
  }, 30_000);

  it('an orphaned step of a run with budget left is reclaimed', async () => {
    await seedOrphans(db, { count: 1_000, repairCount: 5, goneMinutesAgo: 60 });
    const [fresh] = await seedOrphans(db, { count: 1, repairCount: 0, goneMinutesAgo: 10 });

    const passes = [await t.engine.sweepDoctor(), await t.engine.sweepDoctor()];
    const step = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: fresh! } });
    const reclaimed = await db.prisma.flowEvent.count({ where: { run_id: fresh!, type: 'step.reclaimed' } });
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: fresh! } });
    const seen = {
      redispatched: passes.map((p) => p.redispatched.length),
      step: { status: step.status, reclaimStaleAt: step.reclaim_stale_at },
      reclaimedEvents: reclaimed,
      repairCount: run.repair_count,
    };
    expect({ opened: step.reclaim_stale_at !== null, reclaimedEvents: reclaimed }, JSON.stringify(seen)).toEqual({
      opened: true,
      reclaimedEvents: 1,
    });
  }, 90_000);
});
