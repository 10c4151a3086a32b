import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { holdRuns, waitForWaiters } from '../../support/held-rows.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { bareEngine, gate } from '../harness.ts';
import { recordOf } from '../review20/record.ts';
import { lockWaiters } from './lock-waiters.ts';

/**
 * Review 21. ADR 0089: "a child that run's worker started has either committed, and is listed, or its
 * transaction waits on the parent's lock and then finds the parent closed". The parent's replay is in
 * its code, between its start and a ctx.child, when the operator terminates it:
 *
 * - the terminate commits before the ctx.child's transaction begins (a gate in the flow's code);
 * - (PostgreSQL) both wait on the parent's row, held by a connection of the test's own, the terminate
 *   queued first: the child's transaction finds the parent closed;
 * - (PostgreSQL) both wait, the ctx.child's transaction queued first: the terminate lists the new child
 *   and ends it in the same command.
 *
 * Designed: no child is left open under a Terminated parent; each run ends once; nothing follows the
 * end of any; a child that was never started leaves no row and no job.
 */
describe(`terminate while the parent's code starts a child (${testDbKind()})`, () => {
  let db: Database & { url?: string };
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  let n = 0;
  async function parentAtItsChild() {
    n += 1;
    const reached = gate();
    const release = gate();
    const work = defineAction({ name: `review21-pc-work-${n}`, run: async () => 'w' });
    const child = defineFlow({
      name: `review21-pc-child-${n}`,
      version: 1,
      run: async (ctx) => ctx.action(work, null),
    });
    const parent = defineFlow({
      name: `review21-pc-parent-${n}`,
      version: 1,
      run: async (ctx) => {
        reached.open();
        await release.promise;
        return ctx.child(child, null);
      },
    });
    const e = bareEngine(db, { flows: [parent, child], actions: [work] });
    const { runId } = await e.startFlow(parent, null);
    const live = executeRun(e.runtime, runId);
    await reached.promise;
    return { e, runId, release, live };
  }

  async function judgeTree(runId: string) {
    const children = await db.prisma.flowRun.findMany({ where: { parent_run_id: runId } });
    const p = await recordOf(db, runId);
    const cs = await Promise.all(children.map((c) => recordOf(db, c.id)));
    return {
      parent: [p.run.status, p.ends, p.afterTheEnd],
      children: cs.map((c) => [c.run.status, c.run.open, c.ends, c.afterTheEnd]),
      childJobs: await db.prisma.job.count({ where: { run_id: { in: children.map((c) => c.id) } } }),
      childStarted: p.names.filter((x) => x.startsWith('child.started')).length,
    };
  }

  it('the terminate commits first: the ctx.child starts nothing', async () => {
    const { e, runId, release, live } = await parentAtItsChild();
    expect(await e.terminate(runId, { reason: 'review21: stop' })).toEqual({ terminated: true });
    release.open();
    await live;
    expect(await judgeTree(runId)).toEqual({
      parent: ['Terminated', 1, []],
      children: [],
      childJobs: 0,
      childStarted: 0,
    });
  });

  for (const first of ['terminate', 'ctx.child'] as const)
    it.skipIf(testDbKind() !== 'postgres')(`both wait on the parent's row, ${first} queued first`, async () => {
      const { e, runId, release, live } = await parentAtItsChild();
      const holder = await holdRuns(db.url!, [runId]);
      let terminating: Promise<unknown>;
      if (first === 'terminate') {
        terminating = e.terminate(runId, { reason: 'review21: stop' });
        await waitForWaiters(db, holder.pid, 1);
        release.open();
      } else {
        release.open();
        await waitForWaiters(db, holder.pid, 1);
        terminating = e.terminate(runId, { reason: 'review21: stop' });
      }
      await lockWaiters(db, 2);
      await holder.commit();
      expect(await terminating).toEqual({ terminated: true });
      await live;
      expect(await judgeTree(runId)).toEqual(
        first === 'terminate'
          ? { parent: ['Terminated', 1, []], children: [], childJobs: 0, childStarted: 0 }
          : {
              parent: ['Terminated', 1, []],
              children: [['Terminated', false, 1, []]],
              // The child's wake, queued with it, is left for a run that is over (a worker drops it).
              childJobs: 1,
              childStarted: 1,
            },
      );
    });
});
