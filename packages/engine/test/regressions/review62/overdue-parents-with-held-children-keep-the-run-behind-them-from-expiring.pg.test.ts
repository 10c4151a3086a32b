import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineFlow, type Json } from '../../../src/index.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { capturingLogger } from '../../support/capturing-logger.ts';
import { holdRuns, type HeldRows } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';

/**
 * Review 62 (ADR 0135 §1: "Other rows in the transaction (a step, a child) are still waited for at most 1 s",
 * and a run still held is passed over; ADR 0134's consequence: "Every other run's deadline is kept"; ADR
 * 0134's rejected option: held runs at the head of the stalest-first order must not use the pass's budget so
 * that "the runs behind them would never be reached").
 *
 * Attacked: the hold one level down from `many-held-overdue-runs-keep-the-run-behind-them-from-expiring`.
 * Six overdue parents, each parked on its child, whose CHILD rows one other session holds (the parents' own
 * rows free), at the head of the stalest-first order, and one free overdue run behind them; settings out of
 * the box (pass budget 5 s). Each parent's expiry takes its row at once (nothing of the allowance spent),
 * then waits 1 s for its child's row and passes the parent over. Is the free run expired?
 */
const PARENTS = 6;

const child = defineFlow({
  name: 'r62-held-child',
  version: 1,
  run: async (ctx) => ctx.awaitSignal<Json>('go', { timeoutSeconds: 3600 }),
});
const parent = defineFlow({
  name: 'r62-overdue-parent',
  version: 1,
  run: async (ctx) => ctx.child(child, null),
});

describe('review 62: overdue parents whose children are held, ahead of a free overdue run (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let held: HeldRows | undefined;
  const capture = capturingLogger();
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    t = await createTestEngine({ db, flows: [parent, child, waiter], actions, logger: capture.logger });
  });
  afterAll(async () => {
    await held?.rollback().catch(() => undefined);
    await t?.close();
    await db?.close();
  });

  it('the free overdue run behind them is expired', async () => {
    const children: string[] = [];
    for (let n = 0; n < PARENTS; n++) {
      const p = await t.engine.startFlow(parent, null, { expiresInSeconds: 60 + n });
      await t.drive(p.runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
      const c = await waitFor('the child to park', async () => {
        const row = await db.prisma.flowRun.findFirst({ where: { parent_run_id: p.runId } });
        return row?.status === 'Waiting' ? row : undefined;
      });
      children.push(c.id);
    }
    const free = await t.engine.startFlow(waiter, null, { expiresInSeconds: 600 });
    await t.drive(free.runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    await t.engine.stopWorkers();
    t.clock.advance(3_600_000);
    held = await holdRuns(db.url!, children);

    const passes = [];
    for (let pass = 1; pass <= 2; pass++) {
      const before = capture.lines.length;
      const started = performance.now();
      const p = await t.engine.sweepExpiredRuns();
      passes.push({
        expired: p.expired.length,
        tookMs: Math.round(performance.now() - started),
        parentsPassedOver: capture.lines.slice(before).filter((l) => String(l.msg).startsWith('expiry: run ')).length,
      });
    }
    const freeExpired = (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: free.runId } })).expired_at !== null;
    // Control: once the children are let go, one pass reaches and expires the free run.
    await held.rollback();
    held = undefined;
    const control = await t.engine.sweepExpiredRuns();
    expect(
      { freeExpired },
      JSON.stringify({ parents: PARENTS, passes, controlPassExpiredFree: control.expired.includes(free.runId) }),
    ).toEqual({ freeExpired: true });
  }, 90_000);
});
