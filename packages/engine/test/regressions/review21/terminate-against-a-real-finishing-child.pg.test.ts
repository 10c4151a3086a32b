import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { Database } from '../../../src/db/database.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { recordOf } from '../review20/record.ts';
import { startThreeLevelTree } from '../review20/support/three-level-tree.ts';
import { lockWaiters } from './lock-waiters.ts';

/**
 * Review 21. ADR 0089's lock cycle with a REAL finishing child, not a connection playing one: the
 * leaf's own replay finishes it (its row FOR UPDATE, its step's outcome, run.completed, then its
 * parent's row to settle the parent's waiting step), while the operator's terminate of the root holds
 * root and mid and asks for the leaf. A connection of the test's own holds the leaf's step row, so the
 * leaf's finish waits there holding the leaf; the terminate queues on the leaf; the holder commits, and
 * the leaf's finish asks for mid. As first written (against ebae558, which locked the root, then mid,
 * then the leaf) that closed a cycle and PostgreSQL rolled one back. Since the terminate locks the
 * tree deepest first (lockOpenTree, ADR 0089's amendment), it holds nothing of the leaf's ancestors
 * while it waits for the leaf: the leaf's finish goes through, and the terminate then ends mid and root.
 *
 * Designed: the terminate returns terminated; each run ends once and nothing follows any run's end;
 * the leaf Completed and settled mid's waiting step before mid's end (child.finished, then
 * run.terminated).
 */
describe('terminate against a real finishing child (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it("the leaf's finish is waited for, then the tree ends consistent", async () => {
    if (!db.url) throw new Error('this test needs the PostgreSQL project');
    const tree = await startThreeLevelTree(db, 'review21-real');
    const { e, release } = tree;
    const [runId, midId, leafId] = tree.ids;
    const live = tree.live.then(
      (r) => r,
      (err: { code?: string; message?: string }) => `threw ${err.code ?? err.message}`,
    );
    const step = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: leafId, sequence: 1 } });

    // The leaf's step row, held: the leaf's finish locks the leaf, then waits here to record the outcome.
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    await holder.query('begin');
    await holder.query('select id from sagaflow.action_runs where id = $1 for update', [step.id]);
    release.open();
    await lockWaiters(db, 1);
    const terminating = e.terminate(runId, { reason: 'review21: stop the tree' }).then(
      (r) => r,
      (err: { code?: string; message?: string }) => ({ error: err.code ?? err.message }),
    );
    // The terminate waits for the leaf (and holds none of its ancestors).
    await lockWaiters(db, 2);
    await holder.query('commit');
    await holder.end();
    const terminated = await terminating;
    const leafReplay = await live;

    const [r, m, l] = await Promise.all([runId, midId, leafId].map((id) => recordOf(db, id)));
    expect({
      terminated,
      runs: [r!.run.status, m!.run.status],
      open: [r!.run.open, m!.run.open, l!.run.open],
      ends: [r!.ends, m!.ends, l!.ends],
      afterTheEnd: [r!.afterTheEnd, m!.afterTheEnd, l!.afterTheEnd],
      duplicates: [r!.duplicateStepOutcomes, m!.duplicateStepOutcomes, l!.duplicateStepOutcomes],
    }).toEqual({
      terminated: { terminated: true },
      runs: ['Terminated', 'Terminated'],
      open: [false, false, false],
      ends: [1, 1, 1],
      afterTheEnd: [[], [], []],
      duplicates: [[], [], []],
    });
    // The leaf's finish was waited for, not rolled back: it settled mid's waiting step before mid's end.
    expect([leafReplay, l!.run.status, l!.steps.map((s) => [s[0], s[2]]), m!.names.slice(-2)]).toEqual([
      'finished',
      'Completed',
      [[1, 'Completed']],
      ['child.finished#1', 'run.terminated'],
    ]);
  });
});
