import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { judgeTree, parentAtItsChild } from './support/parent-at-its-child.ts';

/**
 * Review 21. ADR 0089: a child that the parent's worker starts has either committed, and is ended with
 * the tree, or its transaction waits on the parent's lock and then finds the parent closed. Here the
 * parent's replay is in its code, between its start and a ctx.child (a gate), and the terminate commits
 * before the ctx.child's transaction begins. The orders in which both wait on the parent's row are in
 * terminate-while-the-parent-starts-a-child.pg.test.ts (they need a second connection).
 *
 * Designed: no child is left open under a Terminated parent; the run ends once; nothing follows its
 * end; a child that was never started leaves no row and no job.
 */
describe(`terminate while the parent's code starts a child (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('the terminate commits first: the ctx.child starts nothing', async () => {
    const { e, runId, release, live } = await parentAtItsChild(db);
    expect(await e.terminate(runId, { reason: 'review21: stop' })).toEqual({ terminated: true });
    release.open();
    await live;
    expect(await judgeTree(db, runId)).toEqual({
      parent: ['Terminated', 1, []],
      children: [],
      childJobs: 0,
      childStarted: 0,
    });
  });
});
