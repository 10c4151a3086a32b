import { describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../../src/index.ts';
import { executeRun } from '../../src/runtime/execute-run.ts';
import { waitFor } from '../support/wait-for.ts';
import { bareEngine } from '../regressions/harness.ts';
import { useRunLockHolder } from '../support/run-lock-holder.ts';

/**
 * ADR 0045 on a real PostgreSQL: a run whose row another session holds keeps its batched transition
 * waiting, and the statement carrying it with it; the other runs of the process still go on, in
 * statements sent beside the held one once it is slow. Without that, every run of the process would
 * wait behind one held row (fails with `slowMs` raised past the test's reach).
 */
describe('a held run lock does not hold up the other runs (PostgreSQL)', () => {
  const { db, holdTheRun, commitOnceWaiting, history } = useRunLockHolder();

  it("while one run's transition waits on its held row, other runs finish; once released, it finishes too", async () => {
    let heldRun = '';
    const holdsItsRun = defineAction({
      name: 'held-run-first',
      run: async () => {
        await holdTheRun(heldRun);
        return 'first';
      },
    });
    const noop = (name: string) => defineAction({ name, run: async () => name });
    const [then, a, b, c] = [noop('held-run-then'), noop('free-a'), noop('free-b'), noop('free-c')];
    const held = defineFlow({
      name: 'held-run',
      version: 1,
      run: async (ctx) => [await ctx.action(holdsItsRun, null), await ctx.action(then, null)],
    });
    const free = defineFlow({
      name: 'free-runs',
      version: 1,
      run: async (ctx) => [await ctx.action(a, null), await ctx.action(b, null), await ctx.action(c, null)],
    });
    const e = bareEngine(db(), { flows: [held, free], actions: [holdsItsRun, then, a, b, c] });
    heldRun = (await e.startFlow(held, null)).runId;
    const heldEnd = executeRun(e.runtime, heldRun);
    // Its step-2 transition is out, waiting on the row the test's session holds.
    await waitFor('the held run to wait for its row', async () => {
      const waiting = await db().prisma.$queryRaw<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock'
           and query like '%sagaflow: step transitions%'`;
      return (waiting[0]?.n ?? 0) > 0 ? true : undefined;
    });
    const others = await Promise.all([1, 2, 3].map(() => e.startFlow(free, null)));
    expect(await Promise.all(others.map((o) => executeRun(e.runtime, o.runId)))).toEqual([
      'finished',
      'finished',
      'finished',
    ]);
    for (const o of others)
      expect((await db().prisma.flowRun.findUniqueOrThrow({ where: { id: o.runId } })).status).toBe('Completed');
    expect((await db().prisma.flowRun.findUniqueOrThrow({ where: { id: heldRun } })).status).toBe('Running');

    await commitOnceWaiting('sagaflow: step transitions', async () => {});
    expect(await heldEnd).toBe('finished');
    expect(await history(heldRun)).toEqual([
      'run.started',
      'run.running',
      'action.started#1',
      'action.completed#1',
      'action.started#2',
      'action.completed#2',
      'run.completed',
    ]);
  });
});
