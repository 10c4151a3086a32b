import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { judgeSiblings, replayChild, runDueWakes, siblingParent, trackedDeps } from './support/sibling-children.ts';

/**
 * Review 23. `try { await Promise.all([ctx.child(A), ctx.child(B)]) } catch { await ctx.compensate(); throw }`
 * after a booking: A fails at once. Either B's start is still out when the parent's first replay (R1)
 * parks on A (its input check held at a gate, let go after the parent's replay that meets A's failure),
 * or B was started and is still running.
 *
 * Guarantees: the booking's compensation runs once and is recorded Completed; the parent ends once,
 * Compensated, and nothing follows its end; each child is started at most once; no child is left open
 * when the parent has ended (ADR 0006: a 'propagate' child does not outlive its parent), and so no child's
 * action runs after the parent ended.
 */
describe(`a child fails while its sibling is out (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  for (const bOut of [true, false])
    it(bOut ? "B's start is still out when A fails" : 'B is started and running when A fails', async () => {
      const s = siblingParent(db, { children: 2, firstFails: true });
      const runId = await s.start();
      const b = bOut ? s.hold('B') : null;
      const r1 = trackedDeps(db, s.e.runtime);
      expect(await executeRun(r1.deps, runId)).toBe('parked');
      if (b) await b.reached;
      else await r1.quiet();

      expect(await replayChild(db, s.e, runId, s.seqs.A)).toBe('Failed');
      // The parent's replay that meets A's failure, while B's start is still out (or B is running).
      await executeRun(s.e.runtime, runId);
      if (b) {
        r1.mark();
        b.release();
        await r1.quiet();
      }
      const { openAtParentEnd } = await runDueWakes(db, s.e, runId);
      const judged = await judgeSiblings(db, runId);
      expect({
        parent: [judged.parent.status, judged.parent.ends, judged.parent.afterTheEnd],
        compensations: judged.parent.compensations,
        unbookRan: s.ran.unbook ?? 0,
        startedAtMostOnce: Object.values(judged.runsPerSeq).every((k) => k === 1),
        openAtParentEnd,
        orphans: judged.orphans,
        workBAfterTheParentEnded: judged.children.filter((c) => c.seq === 3 && c.status === 'Completed').length,
      }).toEqual({
        parent: ['Compensated', 1, []],
        compensations: [[expect.stringMatching(/-unbook$/), 'Completed', 1]],
        unbookRan: 1,
        startedAtMostOnce: true,
        openAtParentEnd: [],
        orphans: [],
        workBAfterTheParentEnded: 0,
      });
    });
});

/**
 * Review 23. The same, with a parent whose code does not catch: A's failure fails the parent at once (no
 * compensation to lose), while B is started and running, or while B's start is still out.
 *
 * Guarantees: the parent ends once, Failed; no child is left open when the parent has ended; no child's
 * action runs after the parent ended.
 */
describe(`a child fails the parent while its sibling is out (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  for (const bOut of [true, false])
    it(bOut ? "B's start is still out when A fails" : 'B is started and running when A fails', async () => {
      const s = siblingParent(db, { children: 2, firstFails: true, noCatch: true });
      const runId = await s.start();
      const b = bOut ? s.hold('B') : null;
      const r1 = trackedDeps(db, s.e.runtime);
      expect(await executeRun(r1.deps, runId)).toBe('parked');
      if (b) await b.reached;
      else await r1.quiet();

      expect(await replayChild(db, s.e, runId, s.seqs.A)).toBe('Failed');
      const failing = s.e.runtime;
      await executeRun(failing, runId);
      if (b) {
        r1.mark();
        b.release();
        await r1.quiet();
      }
      const { openAtParentEnd } = await runDueWakes(db, s.e, runId);
      const judged = await judgeSiblings(db, runId);
      expect({
        parent: [judged.parent.status, judged.parent.ends, judged.parent.afterTheEnd],
        startedAtMostOnce: Object.values(judged.runsPerSeq).every((k) => k === 1),
        openAtParentEnd,
        orphans: judged.orphans,
        children: judged.children.map((c) => [c.seq, c.status]),
        workB: s.ran['work-b'] ?? 0,
      }).toEqual({
        parent: ['Failed', 1, []],
        startedAtMostOnce: true,
        openAtParentEnd: [],
        orphans: [],
        children: expect.not.arrayContaining([[3, 'Completed']]) as unknown,
        workB: 0,
      });
    });
});
