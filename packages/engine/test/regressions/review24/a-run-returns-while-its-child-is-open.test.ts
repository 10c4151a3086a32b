import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { recordOf } from '../review20/record.ts';
import { childrenOf, runDueWakes, trackedDeps } from '../review23/support/sibling-children.ts';
import { lateParent } from './support/late-flows.ts';

/**
 * Review 24 (ADR 0093, decision 3). `await Promise.race([ctx.child(A), ctx.awaitSignal('stop')]); return 'done'`:
 * the first replay starts A and parks. A is not replayed (it stays open, its action not run); the signal comes,
 * and the parent's next replay (R2) may return Completed while A is open (or park on A, and end after it).
 *
 * Guarantees: the parent ends once, Completed, nothing after its end; a 'propagate' A open at the parent's end is
 * listed in children_cancelled, ends Cancelled once and never runs its action; an 'abandon' A is left alone (no
 * cancel request) and runs to its end; nothing is left open.
 */
describe(`a run returns while its child is open (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  for (const policy of ['propagate', 'abandon'] as const)
    it(`a signal resolves the race against an open '${policy}' child`, async () => {
      const s = lateParent(db, { shape: 'child-or-signal', policy });
      const runId = await s.start();
      const r1 = trackedDeps(db, s.e.runtime);
      expect(await executeRun(r1.deps, runId)).toBe('parked');
      // R1 may park on the signal while A's start is still out: let it settle.
      await r1.quiet();
      const [a] = await childrenOf(db, runId);
      await s.e.signal(runId, 'stop');
      await db.prisma.job.deleteMany({ where: { run_id: runId } });
      const r2 = await executeRun(s.e.runtime, runId);
      const endedFirst = (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).finished_at !== null;
      console.log(`review24 child-or-signal (${policy}): the parent ended first: ${endedFirst}`);
      for (let i = 0; i < 3; i++) await runDueWakes(db, s.e, runId);

      const parent = await recordOf(db, runId);
      const child = await recordOf(db, a!.id);
      const childRow = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: a!.id } });
      const end = await db.prisma.flowEvent.findFirstOrThrow({ where: { run_id: runId, type: 'run.completed' } });
      const cancelledByEnd = (end.data as { children_cancelled?: string[] }).children_cancelled ?? [];
      const cancels = policy === 'propagate' && endedFirst;
      expect({
        r2: endedFirst ? r2 : 'parked',
        parent: [parent.run.status, parent.ends, parent.afterTheEnd],
        child: [child.run.status, child.ends, child.afterTheEnd, childRow.cancel_requested_at !== null],
        cancelledByEnd,
        workA: s.ran['work-a'] ?? 0,
      }).toEqual({
        r2: endedFirst ? 'finished' : 'parked',
        parent: ['Completed', 1, []],
        child: [cancels ? 'Cancelled' : 'Completed', 1, [], cancels],
        cancelledByEnd: cancels ? [a!.id] : [],
        workA: cancels ? 0 : 1,
      });
    });
});
