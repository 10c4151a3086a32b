import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { capturingLogger } from '../../support/capturing-logger.ts';
import { holdRuns, type HeldRows } from '../../support/held-rows.ts';
import { parkedWaiters } from '../../support/parked-waiters.ts';
import { seedOpenChildren } from '../../support/seed-open-children.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';

/**
 * Review 64, HELD (ADR 0137: "a run's row (or a step's, a child's)" held for good is journaled): an overdue
 * parent P whose only open child C another session holds for good. Each expiry sweep locks P, then its one
 * statement waits for C and gives up (held). Nothing at 0 s and 30 s; one `run_held` on P (sweep expiry) at
 * 61 s, none at 121 s; P is expired at the first sweep after C is let go, C asked to cancel once.
 */
describe('held: an overdue parent whose child is held for good is journaled run_held (postgres)', () => {
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

  it('journaled once on the parent after a minute, expired once the child is let go', async () => {
    const [parentId] = await parkedWaiters(t, [60]);
    await seedOpenChildren(db, parentId!, 1);
    const child = (await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: parentId! } })).id;
    t.clock.advance(300_000);
    held = await holdRuns(db.url!, [child]);
    const entries = () => db.prisma.anomalyLog.findMany({ where: { code: 'run_held' }, orderBy: { id: 'asc' } });

    const sweeps: string[][] = [];
    const counts: number[] = [];
    for (const step of [0, 30_000, 31_000, 60_000]) {
      t.clock.advance(step);
      sweeps.push((await t.engine.sweepExpiredRuns()).expired);
      counts.push((await entries()).length);
    }
    await held.rollback();
    held = undefined;
    const after = await t.engine.sweepExpiredRuns();
    const all = await entries();
    const childRow = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: child } });
    const childEvents = await db.prisma.flowEvent.count({ where: { run_id: child, type: 'run.cancel_requested' } });
    expect({
      sweeps,
      counts,
      entries: all.map((e) => ({
        run: e.run_id === parentId ? 'P' : e.run_id,
        sweep: (e.details as { sweep?: string }).sweep,
        held: (e.details as { held_seconds?: number }).held_seconds,
      })),
      after: after.expired,
      childAsked: childRow.cancel_reason?.startsWith(`parent ${parentId} expired: `),
      childEvents,
    }).toEqual({
      sweeps: [[], [], [], []],
      counts: [0, 0, 1, 1],
      entries: [{ run: 'P', sweep: 'expiry', held: 61 }],
      after: [parentId],
      childAsked: true,
      childEvents: 1,
    });
  }, 30_000);
});
