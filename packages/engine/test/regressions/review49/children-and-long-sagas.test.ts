import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction } from '../../../src/definitions/define-action.ts';
import { defineFlow } from '../../../src/definitions/define-flow.ts';
import type { FlowDefinition } from '../../../src/definitions/flow-context.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { readUnderLoad, untilEnded } from './support/until-ended.ts';

/**
 * Review 49 (5). A deep chain of child runs (depth 50), a wide one (500 children), the parent's
 * cancellation reaching the whole chain (ADR 0093: propagate by default), and a saga with 500
 * completed steps rolled back: compensations in reverse order, each once (seed 001).
 */
const chain: FlowDefinition<{ depth: number; wait: boolean }, { depth: number }> = defineFlow({
  name: 'r49.chain',
  version: 1,
  run: async (ctx, i: { depth: number; wait: boolean }): Promise<{ depth: number }> => {
    if (i.depth === 0) {
      if (i.wait) await ctx.awaitSignal('go', { timeoutSeconds: 86_400 });
      return { depth: 0 };
    }
    const below = await ctx.child(chain, { depth: i.depth - 1, wait: i.wait });
    return { depth: below.depth + 1 };
  },
});
const leaf = defineFlow({
  name: 'r49.leaf',
  version: 1,
  run: (_ctx, i: { k: number }) => Promise.resolve({ k: i.k }),
});
const wide = defineFlow({
  name: 'r49.wide',
  version: 1,
  run: async (ctx, i: { n: number }) => {
    const outs = await Promise.all(Array.from({ length: i.n }, (_, k) => ctx.child(leaf, { k })));
    return { sum: outs.reduce((a, o) => a + o.k, 0), count: outs.length };
  },
});

const waitingLeaf = defineFlow({
  name: 'r49.waiting-leaf',
  version: 1,
  run: async (ctx, i: { k: number }) => {
    await ctx.awaitSignal('go', { timeoutSeconds: 86_400 });
    return { k: i.k };
  },
});
const wideWaiting = defineFlow({
  name: 'r49.wide-waiting',
  version: 1,
  run: async (ctx, i: { n: number }) => {
    const outs = await Promise.all(Array.from({ length: i.n }, (_, k) => ctx.child(waitingLeaf, { k })));
    return { count: outs.length };
  },
});

const undone: number[] = [];
const book = defineAction({ name: 'r49.book', run: (i: { k: number }) => Promise.resolve({ k: i.k }) });
const unbook = defineAction({
  name: 'r49.unbook',
  run: (i: { k: number }) => {
    undone.push(i.k);
    return Promise.resolve({ undone: i.k });
  },
});
const refuse = defineAction({ name: 'r49.refuse', run: () => Promise.reject(new Error('no more')) });
const longSaga = defineFlow({
  name: 'r49.long-saga',
  version: 1,
  run: async (ctx, i: { n: number }) => {
    try {
      for (let k = 0; k < i.n; k++)
        await ctx
          .action(book, { k })
          .compensateWith(unbook, (o) => ({ k: o.k }))
          .run();
      await ctx.action(refuse, {}).run();
      return { ok: true };
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

describe(`long chains of children and long sagas (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [chain, leaf, wide, longSaga, waitingLeaf, wideWaiting],
      actions: [book, unbook, refuse],
      config: { worker: { concurrency: 8 } },
    });
  });
  afterAll(async () => {
    await t?.closeAll();
  });

  it('a chain of 50 child runs completes, each parent with its child result', { timeout: 600_000 }, async () => {
    const { runId } = await readUnderLoad(() => t.engine.startFlow(chain, { depth: 50, wait: false }));
    const run = await untilEnded(t, runId, 60_000);
    expect(run.status).toBe('Completed');
    expect(run.output).toEqual({ depth: 50 });
    const tree = await t.db.prisma.flowRun.count({ where: { flow_name: 'r49.chain', status: 'Completed' } });
    expect(tree).toBe(51);
  });

  it('cancelling the root of a 50-deep chain cancels every run under it', { timeout: 600_000 }, async () => {
    const { runId } = await readUnderLoad(() => t.engine.startFlow(chain, { depth: 50, wait: true }));
    t.engine.startWorkers();
    const leafRun = await waitFor(
      'the chain to reach its leaf, waiting for its signal',
      async () =>
        (await readUnderLoad(() =>
          t.db.prisma.flowRun.findFirst({
            where: { flow_name: 'r49.chain', status: 'Waiting', input: { equals: { depth: 0, wait: true } } },
          }),
        )) ?? undefined,
      200_000,
    );
    expect(await t.engine.cancel(runId, { reason: 'review 49', cleanupSeconds: 600 })).toEqual({ requested: true });
    const root = await untilEnded(t, runId, 60_000);
    expect(root.status).toBe('Cancelled');
    await untilEnded(t, leafRun.id, 60_000);
    const ids: string[] = [];
    for (let id: string | null = leafRun.id; id;) {
      const r: { id: string; parent_run_id: string | null; status: string } =
        await t.db.prisma.flowRun.findUniqueOrThrow({
          where: { id },
          select: { id: true, parent_run_id: true, status: true },
        });
      ids.push(`${r.status}`);
      id = r.parent_run_id;
    }
    expect(ids).toHaveLength(51);
    expect(ids.filter((s) => s !== 'Cancelled')).toEqual([]);
  });

  it('a parent of 500 children completes with every child result', { timeout: 600_000 }, async () => {
    const { runId } = await readUnderLoad(() => t.engine.startFlow(wide, { n: 500 }));
    const run = await untilEnded(t, runId, 60_000);
    expect(run.status).toBe('Completed');
    expect(run.output).toEqual({ sum: (500 * 499) / 2, count: 500 });
    expect(await t.db.prisma.flowRun.count({ where: { parent_run_id: runId } })).toBe(500);
  });

  it('cancelling a parent of 500 waiting children cancels all 500', { timeout: 600_000 }, async () => {
    const { runId } = await readUnderLoad(() => t.engine.startFlow(wideWaiting, { n: 500 }));
    t.engine.startWorkers();
    await waitFor(
      'all 500 children to wait for their signal',
      async () =>
        (await readUnderLoad(() =>
          t.db.prisma.flowRun.count({ where: { parent_run_id: runId, status: 'Waiting' } }),
        )) === 500
          ? true
          : undefined,
      280_000,
    );
    expect(await t.engine.cancel(runId, { reason: 'review 49 wide', cleanupSeconds: 600 })).toEqual({
      requested: true,
    });
    const parent = await untilEnded(t, runId, 60_000);
    expect(parent.status).toBe('Cancelled');
    let left = '';
    await waitFor(
      () => `every child to end Cancelled: ${left}`,
      async () => {
        const counts = await readUnderLoad(() =>
          t.db.prisma.flowRun.groupBy({ by: ['status'], where: { parent_run_id: runId }, _count: { _all: true } }),
        );
        left = JSON.stringify(counts);
        return counts.find((c) => c.status === 'Cancelled')?._count._all === 500 ? true : undefined;
      },
      200_000,
    );
  });

  it('a saga with 500 completed steps compensates all 500, newest first, each once', { timeout: 600_000 }, async () => {
    undone.length = 0;
    const { runId } = await readUnderLoad(() => t.engine.startFlow(longSaga, { n: 500 }));
    const run = await untilEnded(t, runId, 60_000);
    expect(run.status).toMatch(/Compensated|Failed/);
    expect(undone).toHaveLength(500);
    expect(undone).toEqual(Array.from({ length: 500 }, (_, k) => 499 - k));
    const comps = await t.db.prisma.compensationRun.findMany({ where: { run_id: runId } });
    expect(comps).toHaveLength(500);
    expect(comps.filter((c) => c.status !== 'Completed' || c.attempts !== 1)).toEqual([]);
  });
});
