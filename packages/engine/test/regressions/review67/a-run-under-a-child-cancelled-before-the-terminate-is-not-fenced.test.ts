import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow, type Json } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { fenceOnly, states } from './support/tree.ts';

/** When each run of the compensation ran, by the test clock: none may come after the terminate's fence. */
const refunds: number[] = [];
let now = () => 0;
const charge = defineAction({ name: 'r67-charge', run: async () => ({ charged: true }) });
const refund = defineAction({
  name: 'r67-refund',
  run: async () => {
    refunds.push(now());
    return null;
  },
});
/** G: charges (refunded if it is undone), then waits a month for a signal. */
const leaf = defineFlow({
  name: 'r67-fg-leaf',
  version: 1,
  run: async (ctx): Promise<Json> => {
    try {
      await ctx
        .action(charge, null)
        .compensateWith(refund, () => null)
        .run();
      return await ctx.awaitSignal('go', { timeoutSeconds: 30 * 86_400 });
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});
/** C: awaits G. */
const mid = defineFlow({
  name: 'r67-fg-mid',
  version: 1,
  run: async (ctx): Promise<Json> => ctx.child(leaf, null, { cancellation: 'propagate' }),
});
/** P: awaits C. */
const top = defineFlow({
  name: 'r67-fg-top',
  version: 1,
  run: async (ctx): Promise<Json> => ctx.child(mid, null, { cancellation: 'propagate' }),
});

const reason = 'stopped by ops';

/**
 * Review 67. ADR 0125/0126: the terminate's first commit fences "every open 'propagate' descendant" (its cleanup
 * window closed at the command's `now`); ADR 0136's second addendum: "no descendant of a terminated run runs its
 * code again". ADR 0140 §1/§4: the monitor ends what a terminate fenced; "a cancel's … tree is not touched".
 *
 * P → C → G, all 'propagate'; G charged (compensated by a refund) and waits for a signal. An operator cancels G
 * with an hour's cleanup window, then C with a second's (G, asked already, keeps its own request). Past C's
 * window, C's replay closes it `Cancelled`; G is still open, in its window, its wake not yet run. Then P (still
 * open: its wake from C's end not run yet) is terminated, and the terminate stops after its first commit.
 *
 * The fence walks only through open runs (`requestDescendantsCancel`): it stops at the closed C and never
 * reaches G, whose window stays open. G's replay then runs its refund after P's terminate committed, and G ends
 * `Cancelled`. ADR 0140's premise ("the rest of the tree stays fenced: no run in it runs another line of its
 * code") does not hold for G while the terminate is stopped; its batches (and the monitor's walk) go through
 * closed runs asked to cancel, so they would reach G, but the fence does not.
 */
describe(`a run under a child cancelled before its parent's terminate (${testDbKind()})`, () => {
  let db: Database;
  let t: TestEngine;
  beforeEach(async () => {
    refunds.length = 0;
    db = await openTestDatabase({ poolSize: 6 });
    t = await createTestEngine({
      db,
      flows: [top, mid, leaf],
      actions: [charge, refund],
      config: { monitor: { unfinished_terminate_after_seconds: 60 } },
    });
    now = () => t.clock.now().getTime();
  });
  afterEach(async () => {
    await t?.close();
    await db?.close();
  });

  it('the terminate’s fence closes G’s window: G runs no compensation after it', async () => {
    const { runId: p } = await t.engine.startFlow(top, null);
    t.engine.startWorkers();
    const { c, g } = await waitFor('G to wait for its signal', async () => {
      const cRow = await db.prisma.flowRun.findFirst({ where: { parent_run_id: p } });
      const gRow = cRow && (await db.prisma.flowRun.findFirst({ where: { parent_run_id: cRow.id } }));
      return cRow?.status === 'Waiting' && gRow?.status === 'Waiting' && gRow.waiting_for?.includes('go')
        ? { c: cRow.id, g: gRow.id }
        : undefined;
    });
    await t.engine.stopWorkers();

    // G asked first (an hour's window), then C (a second's): C keeps G's request as it was.
    expect(await t.engine.cancel(g, { reason: 'refund the customer', cleanupSeconds: 3600 })).toEqual({
      requested: true,
    });
    expect(await t.engine.cancel(c, { reason: 'customer asked', cleanupSeconds: 1 })).toEqual({ requested: true });
    t.clock.advance(2000);
    await executeRun(t.engine.runtime, c);
    expect((await states(db, [c]))[c]!.status).toBe('Cancelled');
    expect((await states(db, [p, g])).valueOf()).toMatchObject({
      [p]: { status: 'Waiting' },
      [g]: { status: 'Waiting' },
    });

    t.clock.advance(1000);
    const fencedAt = t.clock.now();
    await fenceOnly(t, db, p, reason);
    const gRow = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: g } });

    // G's replay (its wake from C's cancel), after the terminate's commit.
    t.clock.advance(1000);
    t.engine.startWorkers();
    await waitFor('G to close', async () => ((await states(db, [g]))[g]!.status === 'Waiting' ? undefined : true));
    await t.engine.stopWorkers();
    const gEnd = (await states(db, [g]))[g]!;

    expect({
      windowClosedByTheFence: gRow.cancel_deadline_at !== null && gRow.cancel_deadline_at <= fencedAt,
      refundsAfterTheFence: refunds.filter((at) => at > fencedAt.getTime()).length,
      gClosed: gEnd.status === 'Terminated' || gEnd.status === 'Cancelled',
    }).toEqual({ windowClosedByTheFence: true, refundsAfterTheFence: 0, gClosed: true });
    console.log(`review67: G ended ${gEnd.status}, refunds after the fence: ${refunds.length}`);
  });
});
