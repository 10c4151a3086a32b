import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import {
  judgeSiblings,
  runDueWakes,
  siblingParent,
  trackedDeps,
  siblingVariants,
  stopCommands,
} from './support/sibling-children.ts';

/**
 * Review 23. `await Promise.all([ctx.child(A), ctx.child(B), ...])` terminated (the engine's `terminate`,
 * or the `run.terminate` repair) while starts are out:
 *
 * - "B out": the parent's first replay (R1) has parked on A while B's start is out (its input check held);
 * - "A and B out": R1 has asked for both and neither start is written (both checks held).
 *
 * The terminate commits; then the held starts are let go.
 *
 * Guarantees (ADR 0089): the parent ends Terminated once and nothing follows its end; every child that
 * was started ends Terminated in the same command and none is left open; a start let go after the
 * terminate writes nothing (no child run, no `child.started`); no child's action runs.
 */
const variants = siblingVariants;
const terminates = stopCommands('terminate');

describe(`terminate while the parent's sibling children are being started (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  for (const [how, terminate] of terminates)
    for (const out of ['B out', 'A and B out'] as const)
      for (const [label, opts] of variants)
        it(`${how}, ${out}, ${label}`, async () => {
          const s = siblingParent(db, opts);
          const runId = await s.start();
          const a = out === 'A and B out' ? s.hold('A') : null;
          const b = s.hold('B');
          const r1 = trackedDeps(db, s.e.runtime);
          const live = executeRun(r1.deps, runId);
          await Promise.all([a?.reached, b.reached]);
          // R1 parks on the first child that waits: A with A's start let through, C (no input check) with three
          // children. Its park is waited for, so the terminate is drafted against the state it meets.
          if (!a || opts.children === 3) expect(await live).toBe('parked');
          // The starts R1 made (A's, C's) have settled: what the terminate meets is written.
          await r1.quiet();

          await terminate(s.e, db, runId);
          r1.mark();
          a?.release();
          b.release();
          await live;
          await r1.quiet();
          const { openAtParentEnd } = await runDueWakes(db, s.e, runId);
          const judged = await judgeSiblings(db, runId);
          const started = [...(a ? [] : [2]), ...(opts.children === 3 ? [4] : [])];
          expect({
            parent: [judged.parent.status, judged.parent.ends, judged.parent.afterTheEnd],
            childStarted: judged.childStarted,
            runsPerSeq: judged.runsPerSeq,
            children: judged.children.map((c) => [c.seq, c.status, c.ends, c.afterTheEnd]),
            openAtParentEnd,
            orphans: judged.orphans,
            childrensWork: [s.ran['work-a'] ?? 0, s.ran['work-b'] ?? 0, s.ran['work-c'] ?? 0],
          }).toEqual({
            parent: ['Terminated', 1, []],
            childStarted: Object.fromEntries(started.map((q) => [q, 1])),
            runsPerSeq: Object.fromEntries(started.map((q) => [q, 1])),
            children: started.map((q) => [q, 'Terminated', 1, []]),
            openAtParentEnd: [],
            orphans: [],
            childrensWork: [0, 0, 0],
          });
        });
});
