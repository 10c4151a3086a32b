import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineFlow, type Json } from '../../../src/index.ts';
import { terminateRootAndFence } from '../../../src/api/terminate-run.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { lockOpenRun } from '../../../src/store/lock-open-run.ts';
import { lockOpenTree } from '../../../src/store/lock-open-tree.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';

const parent = defineFlow({
  name: 'r65-fence-parent',
  version: 1,
  run: async (ctx): Promise<Json> => ctx.child(waiter, null, { cancellation: 'propagate' }),
});

/**
 * Review 65, attacking the terminate's fence (ADR 0125, kept by ADR 0136's addendum: "The terminate's fence and
 * the operator's cancel go the same way"). The fence is the terminate's first commit: the root Terminated and
 * each open 'propagate' descendant's cleanup window closed at once, "so none runs another line of its code
 * before its batch terminates it … were the terminate to stop between batches, none is driven on to a new
 * step" (request-descendants-cancel.ts; the repair's terminate tells the operator "the rest are fenced and run
 * no code").
 *
 * `requestLevel` skips a child already asked to cancel, "and what is under it". A child an operator asked to
 * cancel a moment before (its cleanup window open for 300 s) is therefore not fenced: its window stays open.
 * Here P awaits child C (the `waiter` fixture: step A with compensation undo-A, then a signal wait). An operator
 * cancels C; then P is terminated and the terminate stops after its first commit (the fence; here the engine's
 * own `terminateRootAndFence` in a transaction as `terminateRun` runs it, and no batch after it, as a crash or a
 * lost connection leaves it). C's queued wake replays C.
 *
 * Expected: C is closed by its replay with no new step, as the contrast (a child not asked before) is. Seen: C
 * runs its code on, and records a new compensation (undo-A) after its parent was terminated.
 */
describe(`a child asked to cancel before its parent's terminate is fenced too (${testDbKind()})`, () => {
  let db: Database;
  let t: TestEngine;
  beforeEach(async () => {
    db = await openTestDatabase({ poolSize: 6 });
    t = await createTestEngine({ db, flows: [parent, waiter], actions });
  });
  afterEach(async () => {
    await t?.close();
    await db?.close();
  });

  /** P started, its child C parked on its signal (step A done), the workers stopped. */
  async function parentAndChild(): Promise<{ p: string; c: string }> {
    const { runId: p } = await t.engine.startFlow(parent, null);
    t.engine.startWorkers();
    const c = await waitFor('C to wait for its signal', async () => {
      const row = await db.prisma.flowRun.findFirst({ where: { parent_run_id: p } });
      return row?.status === 'Waiting' && row.waiting_for?.includes('go') ? row.id : undefined;
    });
    await t.engine.stopWorkers();
    return { p, c };
  }

  /** The terminate's first commit (root Terminated, tree fenced), and no batch after it. */
  async function fenceOnly(p: string): Promise<number> {
    return db.prisma.$transaction(async (tx) => {
      await lockOpenTree(tx, p);
      if (!(await lockOpenRun(tx, p, 'update'))) throw new Error('P not open');
      return (await terminateRootAndFence(tx, p, 'stopped by ops', t.clock.now())).fenced;
    });
  }

  async function replayOf(c: string, fencedAt: Date) {
    const before = await db.prisma.flowEvent.count({ where: { run_id: c } });
    const stepsBefore = await db.prisma.compensationRun.count({ where: { run_id: c } });
    const outcome = await executeRun(t.engine.runtime, c);
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: c } });
    const events = await db.prisma.flowEvent.findMany({
      where: { run_id: c },
      orderBy: { id: 'asc' },
      select: { type: true },
    });
    return {
      outcome,
      newCompensations: (await db.prisma.compensationRun.count({ where: { run_id: c } })) - stepsBefore,
      compensationEvents: events
        .slice(before)
        .map((e) => e.type)
        .filter((type) => type.startsWith('compensation.')),
      fencedWindow: run.cancel_deadline_at!.getTime() <= fencedAt.getTime(),
    };
  }

  it('a child an operator asked to cancel first runs no new step after the fence', async () => {
    const { p, c } = await parentAndChild();
    expect((await t.engine.cancel(c, { reason: 'operator asked first', cleanupSeconds: 300 })).requested).toBe(true);
    const fencedAt = t.clock.now();
    await fenceOnly(p);
    const pRow = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: p } });
    expect(pRow.status).toBe('Terminated');
    expect(await replayOf(c, fencedAt)).toEqual({
      outcome: 'finished',
      newCompensations: 0,
      compensationEvents: [],
      fencedWindow: true,
    });
  }, 30_000);

  it('held (contrast): a child not asked before is fenced and closed with no new step', async () => {
    const { p, c } = await parentAndChild();
    const fencedAt = t.clock.now();
    expect(await fenceOnly(p)).toBe(1);
    expect(await replayOf(c, fencedAt)).toEqual({
      outcome: 'finished',
      newCompensations: 0,
      compensationEvents: [],
      fencedWindow: true,
    });
  }, 30_000);
});
