import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { recordOf } from '../review20/record.ts';
import { childrenOf, runDueWakes, trackedDeps } from '../review23/support/sibling-children.ts';
import { lateParent } from './support/late-flows.ts';
import { pausedStatement } from './support/paused-statements.ts';

/** A backend of this database waiting for a lock while running a statement that matches `marker`. */
const lockWaiter = (db: Database, marker: string) =>
  waitFor(`a backend to wait for a lock on a statement with "${marker}"`, async () => {
    const rows = await db.prisma.$queryRaw<{ pid: number }[]>`
      select pid from pg_stat_activity
       where datname = current_database() and wait_event_type = 'Lock' and position(${marker} in query) > 0`;
    return rows.length > 0 ? rows : undefined;
  });

/**
 * Review 24 (ADR 0093, decision 3: "Lock order"), on PostgreSQL. `Promise.all([ctx.child(A), ctx.action(side)])`:
 * `side` fails for good while A is open, so the parent's next replay ends it Failed and requests A's
 * cancellation (parent FOR UPDATE, then A's row). At that moment A's own replay finishes A (A FOR UPDATE, then
 * the parent's row, to settle its step). Each holds its first row while it waits for the other's: a lock cycle,
 * which PostgreSQL breaks by rolling one transaction back. Which one waits first is forced (the other's
 * statement held at a gate until the first waits), so both outcomes are driven. The rolled-back replay is
 * run again, as its failed job would be, and the wakes are followed.
 *
 * Guarantees: A's action's outcome is recorded once (a rolled-back finish must not lose the outcome it carried);
 * the parent ends exactly once (Failed) and nothing follows its end; A ends exactly once and
 * nothing follows its end; A ran its action once; if A was open at the parent's end its cancellation was
 * requested by that end; nothing is left open.
 */
describe('a child finishes as its parent ends: the lock cycle (postgres)', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  for (const firstWaiter of ['the parent', 'the child'] as const)
    it(`${firstWaiter} waits first`, async () => {
      const s = lateParent(db, { shape: 'child+step', sideEnds: 'fails-for-good' });
      const runId = await s.start();
      const side = s.holdAction('side');
      const r1 = trackedDeps(db, s.e.runtime);
      const live = executeRun(r1.deps, runId);
      await side.reached;
      expect(await live).toBe('parked');
      await r1.quiet();
      r1.mark();
      side.release();
      await r1.quiet();
      const childId = (await childrenOf(db, runId))[0]!.id;
      await db.prisma.job.deleteMany({ where: { run_id: { in: [runId, childId] } } });

      // The child's finish holds A and is about to lock the parent (settleParentStep); the parent's end holds
      // the parent and is about to request A's cancellation.
      const childSide = pausedStatement(s.e.runtime, /for no key update of r/);
      const parentSide = pausedStatement(s.e.runtime, /cancel_reason =/);
      let childRun: Promise<unknown>;
      let parentRun: Promise<unknown>;
      if (firstWaiter === 'the parent') {
        childRun = executeRun(childSide.deps, childId).catch((e: unknown) => e);
        await childSide.reached;
        parentSide.release();
        parentRun = executeRun(parentSide.deps, runId).catch((e: unknown) => e);
        await lockWaiter(db, 'cancel_reason =');
        childSide.release();
      } else {
        parentRun = executeRun(parentSide.deps, runId).catch((e: unknown) => e);
        await parentSide.reached;
        childSide.release();
        childRun = executeRun(childSide.deps, childId).catch((e: unknown) => e);
        await lockWaiter(db, 'for no key update of r');
        parentSide.release();
      }
      const [childResult, parentResult] = await Promise.all([childRun, parentRun]);
      const codeOf = (r: unknown) => (r instanceof Error ? ((r as { code?: string }).code ?? r.message) : r);
      const lost = [codeOf(childResult), codeOf(parentResult)];

      // The rolled-back replay runs again (its job would), then every wake is followed.
      for (let i = 0; i < 3; i++) {
        await executeRun(s.e.runtime, runId);
        await executeRun(s.e.runtime, childId);
        await runDueWakes(db, s.e, runId);
      }
      const parent = await recordOf(db, runId);
      const child = await recordOf(db, childId);
      const childRow = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: childId } });
      const end = await db.prisma.flowEvent.findFirstOrThrow({ where: { run_id: runId, type: 'run.failed' } });
      const cancelledByEnd = ((end.data as { children_cancelled?: string[] }).children_cancelled ?? []).length;
      expect({
        parent: [parent.run.status, parent.ends, parent.afterTheEnd],
        child: [child.run.open, child.ends, child.afterTheEnd],
        // A's only step ran once: its outcome is recorded (never left Running under a live claim).
        childSteps: child.steps,
        childStatus: cancelledByEnd === 1 ? childRow.cancel_requested_at !== null : child.run.status,
        workA: s.ran['work-a'],
        // One of the two was rolled back by the lock cycle, or they serialized without one.
        lost: lost.filter((l) => l !== 'finished' && l !== 'parked').length <= 1,
      }).toEqual({
        parent: ['Failed', 1, []],
        child: [false, 1, []],
        childSteps: [[1, 'action', 'Completed', 1]],
        childStatus: cancelledByEnd === 1 ? true : 'Completed',
        workA: 1,
        lost: true,
      });
      console.log(
        `review24 lock cycle (${firstWaiter} waits first): child ${String(lost[0])}, parent ${String(lost[1])}, child ${child.run.status}, children_cancelled ${cancelledByEnd}`,
      );
    });
});
