import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineFlow, type Json } from '../../../src/index.ts';
import { terminateRootAndFence } from '../../../src/api/terminate-run.ts';
import { lockOpenRun } from '../../../src/store/lock-open-run.ts';
import { lockOpenTree } from '../../../src/store/lock-open-tree.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { gatedAction } from '../../support/gated-action.ts';
import { waitFor } from '../../support/wait-for.ts';

const book = gatedAction('r66-book');
const undo = gatedAction('r66-undo');

/** Two bookings, each undone by its compensation, then a long signal wait; on a throw, compensates. */
const child = defineFlow({
  name: 'r66-comp-child',
  version: 1,
  run: async (ctx, input: { fail?: boolean } | null): Promise<Json> => {
    try {
      await ctx
        .action(book.action, { tag: 'b1' })
        .compensateWith(undo.action, () => ({ tag: 'u1' }))
        .run();
      await ctx
        .action(book.action, { tag: 'b2' })
        .compensateWith(undo.action, () => ({ tag: 'u2' }))
        .run();
      if (input?.fail) throw new Error('the carrier refused the booking');
      await ctx.awaitSignal('go', { timeoutSeconds: 3600 });
      return null;
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

const parent = defineFlow({
  name: 'r66-comp-parent',
  version: 1,
  run: async (ctx, input: { fail?: boolean } | null): Promise<Json> =>
    ctx.child(child, input, { cancellation: 'propagate' }),
});

/**
 * Review 66, attacking review 65's fix of the terminate's fence (ADR 0136's second addendum: "The fence now also
 * closes the window of a descendant asked before … and goes under it, so no descendant of a terminated run runs
 * its code again").
 *
 * The fix closes the window for the descendant's NEXT replay. A replay already under way when the fence commits
 * goes on: a compensation is claimed with the cancellation known (run-claimable-step.ts, `isComp`), and the claim
 * (claim-step.ts) asks only that the run be open. Here child C (two bookings, each with a compensation) is asked
 * to cancel by an operator (cleanup 300 s); its replay starts its rollback, and its first compensation (u2) is
 * running when P's terminate makes its first commit (the fence: P Terminated, C's window closed). The terminate
 * then stops (no batch, as a crash or a lost connection between batches leaves it; in a wide tree C may simply be
 * in a later batch). When u2 returns, the same replay claims and runs u1: a new compensation, a business side
 * effect, after the operator terminated the tree ("no compensation runs: what the run did stays done").
 */
describe(`a compensating child runs no new compensation after its parent's fence (${testDbKind()})`, () => {
  let db: Database;
  let t: TestEngine;
  beforeEach(async () => {
    undo.entries.clear();
    book.entries.clear();
    db = await openTestDatabase({ poolSize: 6 });
    t = await createTestEngine({ db, flows: [parent, child], actions: [book.action, undo.action] });
  });
  afterEach(async () => {
    undo.openAll();
    await t?.close();
    await db?.close();
  });

  /** The terminate's first commit (root Terminated, tree fenced) as terminateRun makes it, and no batch after it. */
  async function fenceOnly(p: string): Promise<number> {
    return db.prisma.$transaction(async (tx) => {
      await lockOpenTree(tx, p);
      if (!(await lockOpenRun(tx, p, 'update'))) throw new Error('P not open');
      return (await terminateRootAndFence(tx, p, 'stopped by ops', t.clock.now())).fenced;
    });
  }

  it('an operator-cancelled child in its rollback claims no compensation after the fence', async () => {
    const openU2 = undo.gate('u2');
    const { runId: p } = await t.engine.startFlow(parent, null);
    t.engine.startWorkers();
    const c = await waitFor('C to wait for its signal', async () => {
      const row = await db.prisma.flowRun.findFirst({ where: { parent_run_id: p } });
      return row?.status === 'Waiting' && row.waiting_for?.includes('go') ? row.id : undefined;
    });
    expect((await t.engine.cancel(c, { reason: 'operator asked first', cleanupSeconds: 300 })).requested).toBe(true);
    // C's replay takes the cancellation and starts its rollback: u2 is running.
    await waitFor('u2 to run', async () => ((undo.entries.get('u2') ?? 0) >= 1 ? true : undefined));

    t.clock.advance(1000);
    const fencedAt = t.clock.now();
    expect(await fenceOnly(p)).toBe(1);
    await afterFence(c, fencedAt, openU2);
  }, 30_000);

  it('a child compensating its own failure claims no compensation after the fence', async () => {
    const openU2 = undo.gate('u2');
    const { runId: p } = await t.engine.startFlow(parent, { fail: true });
    t.engine.startWorkers();
    // C fails after its two bookings and starts its rollback: u2 is running.
    await waitFor('u2 to run', async () => ((undo.entries.get('u2') ?? 0) >= 1 ? true : undefined));
    const c = (await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: p } })).id;
    t.clock.advance(1000);
    const fencedAt = t.clock.now();
    expect(await fenceOnly(p)).toBe(1);
    await afterFence(c, fencedAt, openU2);
  }, 30_000);

  /** Lets u2 return, waits for C's replay to go on, and expects no compensation claimed after the fence. */
  async function afterFence(c: string, fencedAt: Date, openU2: () => void): Promise<void> {
    const fenced = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: c } });
    expect(fenced.cancel_deadline_at!.getTime()).toBeLessThanOrEqual(fencedAt.getTime());
    openU2();
    // The replay under way goes on from u2: either it claims u1 (seen) or C is closed with no new step.
    await waitFor('C closed, or u1 claimed', async () => {
      const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: c } });
      const u1 = await db.prisma.compensationRun.count({
        where: { run_id: c, name: undo.action.name, input: { equals: { tag: 'u1' } } },
      });
      return ['Cancelled', 'Terminated', 'Failed', 'Compensated'].includes(run.status) || u1 > 0 ? true : undefined;
    });
    await t.engine.stopWorkers();
    const comps = await db.prisma.compensationRun.findMany({
      where: { run_id: c },
      orderBy: { created_at: 'asc' },
      select: { input: true, status: true, started_at: true },
    });
    const claimedAfterFence = comps
      .filter((x) => x.started_at !== null && x.started_at.getTime() >= fencedAt.getTime())
      .map((x) => (x.input as { tag: string }).tag);
    expect({
      u1Ran: undo.entries.get('u1') ?? 0,
      claimedAfterFence: claimedAfterFence.filter((tag) => tag !== 'u2'),
    }).toEqual({ u1Ran: 0, claimedAfterFence: [] });
  }

  it("with no stop: a child in its rollback runs no compensation between the terminate's batches", async () => {
    const openU2 = undo.gate('u2');
    const { runId: p } = await t.engine.startFlow(parent, null);
    t.engine.startWorkers();
    const c = await waitFor('C to wait for its signal', async () => {
      const row = await db.prisma.flowRun.findFirst({ where: { parent_run_id: p } });
      return row?.status === 'Waiting' && row.waiting_for?.includes('go') ? row.id : undefined;
    });
    // 100 siblings of C whose ids sort first: the terminate's first batch (100 runs, by depth then id) is theirs.
    await db.prisma.$executeRaw`
      insert into "sagaflow"."flow_runs" (id, flow_name, flow_version, status, input, parent_run_id, parent_sequence, parent_cancel_policy)
      select ('00000000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid, ${child.name}, 1, 'Waiting', '{}'::jsonb,
             ${p}::uuid, 100 + n, 'propagate'
        from generate_series(1, 100) n`;
    expect((await t.engine.cancel(c, { reason: 'operator asked first', cleanupSeconds: 300 })).requested).toBe(true);
    await waitFor('u2 to run', async () => ((undo.entries.get('u2') ?? 0) >= 1 ? true : undefined));
    t.clock.advance(1000);
    // After the first batch's commit (a `run.finished` listener, which the terminate awaits), u2 returns: C's replay,
    // under way since before the terminate, goes on while the second batch is still to come. The listener gives it
    // up to 3 s to claim u1, then lets the terminate go on.
    let released = false;
    t.engine.events.on('run.finished', async (e) => {
      if (released || e.runId === p || e.runId === c) return;
      released = true;
      openU2();
      await waitFor(
        'u1 to be claimed',
        async () => ((undo.entries.get('u1') ?? 0) >= 1 ? true : undefined),
        3000,
      ).catch(() => undefined);
    });
    const answer = await t.engine.terminate(p, { reason: 'stopped by ops' });
    await t.engine.stopWorkers();
    // C may end Cancelled (its window closed) or Terminated (its batch): ADR 0125 allows either. It must not
    // have run u1.
    expect({ answer, released, u1Ran: undo.entries.get('u1') ?? 0 }).toEqual({
      answer: { terminated: true },
      released: true,
      u1Ran: 0,
    });
  }, 30_000);
});
