import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { holdRuns, waitForWaiters } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { lockWaiters } from './lock-waiters.ts';
import { judgeTree, parentAtItsChild } from './support/parent-at-its-child.ts';

/**
 * Review 21. The parent's replay is in its code, between its start and a ctx.child, when the operator
 * terminates it, and both the terminate and the ctx.child's transaction wait on the parent's row, held
 * by a connection of the test's own:
 *
 * - the terminate queued first: the child's transaction finds the parent closed and starts nothing;
 * - the ctx.child's transaction queued first: the terminate lists the new child and ends it in the same
 *   command.
 *
 * Designed: no child is left open under a Terminated parent; each run ends once; nothing follows the
 * end of any; a child that was never started leaves no row and no job.
 */
describe("terminate while the parent's code starts a child, both waiting on its row (real PostgreSQL)", () => {
  let db: Database & { url?: string };
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  for (const first of ['terminate', 'ctx.child'] as const)
    it(`${first} queued first`, async () => {
      if (!db.url) throw new Error('this test needs the PostgreSQL project');
      const { e, runId, release, live } = await parentAtItsChild(db);
      const holder = await holdRuns(db.url, [runId]);
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
      expect(await judgeTree(db, runId)).toEqual(
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
