import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import {
  judgeSiblings,
  replayChild,
  runDueWakes,
  siblingParent,
  trackedDeps,
  siblingVariants,
} from './support/sibling-children.ts';

/**
 * Review 23. `await Promise.all([ctx.child(A), ctx.child(B), ...])`: the parent's first replay (R1) parks
 * as soon as A waits, while B's start is still out (its input check held at a gate). A finishes at once
 * and wakes the parent; that replay (R2) runs while R1's start of B has not been written. Then R1's start
 * of B is let go.
 *
 * Guarantees: each child is started once (one run, one `child.started` per sequence); each child's outcome
 * is recorded once in the parent (one `child.finished` per sequence); every action runs once; the parent
 * finishes once, Completed with every child's output, and nothing follows its end; no child is left open.
 */
const variants = siblingVariants;

describe(`a wake of the parent while a sibling child's start is out (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  for (const [label, opts] of variants)
    it(`${label}: A finishes and the parent replays before B's start is written`, async () => {
      const s = siblingParent(db, opts);
      const runId = await s.start();
      const b = s.hold('B');
      const r1 = trackedDeps(db, s.e.runtime);
      expect(await executeRun(r1.deps, runId)).toBe('parked');
      await b.reached;

      // A finishes at once: its end settles the parent's step 2 and wakes the parent.
      expect(await replayChild(db, s.e, runId, s.seqs.A)).toBe('Completed');
      // R2, while R1's start of B is still out.
      await executeRun(s.e.runtime, runId);
      r1.mark();
      b.release();
      await r1.quiet();

      const { openAtParentEnd } = await runDueWakes(db, s.e, runId);
      const seqs = [2, 3, ...(opts.children === 3 ? [4] : [])];
      const once = Object.fromEntries(seqs.map((q) => [q, 1]));
      const judged = await judgeSiblings(db, runId);
      expect(judged).toEqual({
        parent: {
          status: 'Completed',
          ends: 1,
          afterTheEnd: [],
          compensations: [],
          duplicateStepOutcomes: [],
          output: [
            'work-a:"a"',
            'work-b:"b"',
            ...(opts.children === 3 ? ['work-c:"c"'] : []),
            ...(opts.withStep ? ['side:null'] : []),
          ],
        },
        childStarted: once,
        childFinished: once,
        runsPerSeq: once,
        children: seqs.map((seq) => ({
          seq,
          status: 'Completed',
          open: false,
          ends: 1,
          afterTheEnd: [],
          cancelRequested: false,
        })),
        orphans: [],
      });
      expect(openAtParentEnd).toEqual([]);
      expect(s.ran).toEqual({
        book: 1,
        'work-a': 1,
        'work-b': 1,
        ...(opts.children === 3 ? { 'work-c': 1 } : {}),
        ...(opts.withStep ? { side: 1 } : {}),
      });
    });
});
