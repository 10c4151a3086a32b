import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineFlow } from '../src/definitions/define-flow.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { testDbKind } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';

/**
 * ADR 0125: a cancel requests its descendants in one statement, a terminate ends them a batch at a
 * time (100 per transaction) after fencing them. Each run still gets the reason, the event and the
 * wakes it got when the tree was walked one run at a time.
 */
const leaf = defineFlow({
  name: 'tree.leaf',
  version: 1,
  run: async (ctx) => {
    await ctx.awaitSignal('go', { timeoutSeconds: 86_400 });
    return null;
  },
});
const middle = defineFlow({
  name: 'tree.middle',
  version: 1,
  run: async (ctx, i: { n: number }) => {
    await Promise.all(Array.from({ length: i.n }, () => ctx.child(leaf, {})));
    return null;
  },
});
const root = defineFlow({
  name: 'tree.root',
  version: 1,
  run: async (ctx, i: { middles: number; leaves: number }) => {
    await Promise.all(Array.from({ length: i.middles }, () => ctx.child(middle, { n: i.leaves })));
    return null;
  },
});

describe(`commands over a tree of three levels (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [root, middle, leaf], actions: [] });
  });
  afterAll(async () => {
    await t?.closeAll();
  });

  async function tree(middles: number, leaves: number) {
    const { runId } = await t.engine.startFlow(root, { middles, leaves });
    t.engine.startWorkers();
    const descendants = async () => {
      const middlesOf = await t.db.prisma.flowRun.findMany({ where: { parent_run_id: runId }, select: { id: true } });
      const leavesOf = await t.db.prisma.flowRun.findMany({
        where: { parent_run_id: { in: middlesOf.map((m) => m.id) } },
        select: { id: true, status: true },
      });
      return { middlesOf, leavesOf };
    };
    await waitFor(
      'every leaf to wait',
      async () => {
        const { leavesOf } = await descendants();
        return leavesOf.filter((l) => l.status === 'Waiting').length === middles * leaves ? true : undefined;
      },
      120_000,
    );
    await t.engine.stopWorkers();
    const { middlesOf, leavesOf } = await descendants();
    const runs = [...middlesOf, ...leavesOf];
    return { runId, runs };
  }

  it('a cancel reaches every descendant with its own reason, one event and two wakes each', async () => {
    const { runId, runs } = await tree(2, 3);
    expect(await t.engine.cancel(runId, { reason: 'r', cleanupSeconds: 60 })).toEqual({ requested: true });
    const rows = await t.db.prisma.flowRun.findMany({
      where: { id: { in: runs.map((r) => r.id) } },
      select: { id: true, parent_run_id: true, cancel_reason: true, cancel_requested_at: true },
    });
    expect(rows).toHaveLength(8);
    for (const r of rows) {
      const expected =
        r.parent_run_id === runId
          ? `parent ${runId} was cancelled: r`
          : `parent ${r.parent_run_id} was cancelled: parent ${runId} was cancelled: r`;
      expect(r.cancel_reason).toBe(expected);
      expect(await t.db.prisma.flowEvent.count({ where: { run_id: r.id, type: 'run.cancel_requested' } })).toBe(1);
      expect(await t.db.prisma.job.count({ where: { run_id: r.id } })).toBeGreaterThanOrEqual(2);
    }
  });

  it('a terminate of more runs than one batch ends every one, each with its reason', async () => {
    const { runId, runs } = await tree(3, 50);
    expect(await t.engine.terminate(runId, { reason: 't' })).toEqual({ terminated: true });
    const rows = await t.db.prisma.flowRun.findMany({
      where: { id: { in: runs.map((r) => r.id) } },
      select: { id: true, parent_run_id: true, status: true, error: true },
    });
    expect(rows).toHaveLength(153);
    expect(rows.filter((r) => r.status !== 'Terminated')).toEqual([]);
    for (const r of rows) {
      const expected =
        r.parent_run_id === runId
          ? `parent ${runId} was terminated: t`
          : `parent ${r.parent_run_id} was terminated: parent ${runId} was terminated: t`;
      expect((r.error as { message: string }).message).toBe(expected);
    }
    expect((await t.engine.getRun(runId))?.run.status).toBe('Terminated');
    // Issued again: nothing left to end.
    expect(await t.engine.terminate(runId, { reason: 't' })).toEqual({ terminated: false });
  });
});
