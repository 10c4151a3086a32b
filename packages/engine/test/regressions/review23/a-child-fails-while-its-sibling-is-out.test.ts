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
 * (ADR 0093: a 'propagate' child open at its parent's end has its cancellation requested by that end, and
 * then runs no action).
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
      const childB = judged.children.find((c) => c.seq === s.seqs.B);
      expect({
        parent: [judged.parent.status, judged.parent.ends, judged.parent.afterTheEnd],
        compensations: judged.parent.compensations,
        unbookRan: s.ran.unbook ?? 0,
        startedAtMostOnce: Object.values(judged.runsPerSeq).every((k) => k === 1),
        orphans: judged.orphans,
        // B either finished before the parent's end (the parent's replay parked on it while the code
        // compensated), or was open then and had its cancellation requested by that end (ADR 0093): then
        // its action never ran.
        b: openAtParentEnd?.includes(s.seqs.B)
          ? [childB?.status, childB?.cancelRequested, s.ran['work-b'] ?? 0]
          : [childB === undefined || childB.status === 'Completed' ? 'finished first' : childB.status],
      }).toEqual({
        parent: ['Compensated', 1, []],
        compensations: [[expect.stringMatching(/-unbook$/), 'Completed', 1]],
        unbookRan: 1,
        startedAtMostOnce: true,
        orphans: [],
        b: openAtParentEnd?.includes(s.seqs.B) ? ['Cancelled', true, 0] : ['finished first'],
      });
    });
});

/**
 * Review 23. The same, with a parent whose code does not catch: A's failure fails the parent at once (no
 * compensation to lose), while B is started and running, or while B's start is still out.
 *
 * Guarantees: the parent ends once, Failed; a child still open when the parent ended has its cancellation
 * requested by that end (ADR 0093), and ends Cancelled without running its action; none is left open.
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
      const parentEnd = await db.prisma.flowEvent.findFirstOrThrow({ where: { run_id: runId, type: 'run.failed' } });
      expect({
        parent: [judged.parent.status, judged.parent.ends, judged.parent.afterTheEnd],
        startedAtMostOnce: Object.values(judged.runsPerSeq).every((k) => k === 1),
        orphans: judged.orphans,
        children: judged.children.map((c) => [c.seq, c.status, c.cancelRequested]),
        cancelledByTheEnd: (parentEnd.data as { children_cancelled?: string[] }).children_cancelled?.length ?? 0,
        workB: s.ran['work-b'] ?? 0,
      }).toEqual({
        parent: ['Failed', 1, []],
        startedAtMostOnce: true,
        orphans: [],
        // B was open when its parent failed: the failure requested its cancellation (ADR 0093), and B
        // ended Cancelled without running its action. (With B's start still out, B is never started:
        // its start finds the parent closed.)
        children: [[2, 'Failed', false], ...(openAtParentEnd?.includes(3) ? [[3, 'Cancelled', true]] : [])],
        cancelledByTheEnd: openAtParentEnd?.includes(3) ? 1 : 0,
        workB: 0,
      });
    });
});
