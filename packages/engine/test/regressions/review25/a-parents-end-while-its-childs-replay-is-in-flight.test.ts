import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { trackedDeps } from '../review23/support/sibling-children.ts';
import { inFlightChild } from './support/in-flight-child.ts';
import { anomaliesOf, driveTree, judgeTree } from './support/tree.ts';

/**
 * Review 25 (ADR 0093, decision 3: a run's end requests its open 'propagate' children's cancellation and does
 * not wait for them). The parent fails (its `side` step fails for good beside child A) while A's own replay is
 * IN FLIGHT: held inside A's forward action a2, or inside A's compensation ua1 (A compensating because a2
 * failed). The held execution is let go only once the parent's end has committed; then every wake of the tree
 * is followed to the end.
 *
 * Guarantees: every run of the tree ends exactly once with nothing recorded after its end (the parent gets
 * no child.* event after its terminal event; a late settle is refused); no step outcome twice; each action runs
 * at most once (none is retried: maxAttempts 1); a 'propagate' child (and grandchild) ends or is
 * cancel-requested, runs none of its later forward actions (a3, g1) after its cancellation reached it, and
 * compensates what it did (ua1 once) when it ends Cancelled; an 'abandon' child is not cancel-requested and runs
 * to its end; no run stays open with nothing to wake it.
 */
describe(`a parent's end while its child's replay is in flight (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  const cases = [
    { policy: 'propagate', grandchild: false, hold: 'a2', endBy: 'failure' },
    { policy: 'propagate', grandchild: true, hold: 'a2', endBy: 'failure' },
    { policy: 'abandon', grandchild: false, hold: 'a2', endBy: 'failure' },
    { policy: 'propagate', grandchild: false, hold: 'ua1', endBy: 'failure' },
    { policy: 'abandon', grandchild: false, hold: 'ua1', endBy: 'failure' },
    // The engine's run timeout closes the parent (TimedOut) instead; side's failure comes after the end.
    { policy: 'propagate', grandchild: true, hold: 'a2', endBy: 'timeout' },
    { policy: 'propagate', grandchild: false, hold: 'ua1', endBy: 'timeout' },
  ] as const;

  for (const c of cases)
    it(`'${c.policy}' child${c.grandchild ? ' (with a grandchild after a2)' : ''}, held in ${c.hold === 'a2' ? 'its forward action a2' : 'its compensation ua1 (a2 failed)'}, parent ended by ${c.endBy}`, async () => {
      const s = inFlightChild(db, { policy: c.policy, grandchild: c.grandchild, a2Fails: c.hold === 'ua1' });
      const runId = await s.start();
      const side = s.holdAction('side');
      const r1 = trackedDeps(db, s.e.runtime);
      const live = executeRun(r1.deps, runId);
      await side.reached;
      // The parent parks on child A while side is held.
      expect(await live).toBe('parked');
      await r1.quiet();
      const child = await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: runId } });
      // A's replay runs a1, then is held in a2 (or, a2 failing, in the compensation ua1).
      const inFlight = s.holdAction(c.hold);
      await db.prisma.job.deleteMany({ where: { run_id: child.id } });
      const rc = trackedDeps(db, s.e.runtime);
      const childLive = executeRun(rc.deps, child.id);
      await inFlight.reached;
      // side fails for good: its late failure is written with a wake, and the parent's next replay fails it.
      if (c.endBy === 'failure') {
        r1.mark();
        side.release();
        await r1.quiet();
      } else {
        await db.prisma.flowRun.update({
          where: { id: runId },
          data: { run_timeout_at: new Date(s.clock.now().getTime() - 1000) },
        });
      }
      await db.prisma.job.deleteMany({ where: { run_id: runId } });
      expect(await executeRun(s.e.runtime, runId)).toBe('finished');
      if (c.endBy === 'timeout') {
        // side fails after the parent's end: its late failure meets its fence (refused, journaled).
        r1.mark();
        side.release();
        await r1.quiet();
      }
      const endStatus = c.endBy === 'failure' ? 'Failed' : 'TimedOut';
      const parentAtEnd = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      const childAtParentEnd = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: child.id } });
      // Only now A's held execution goes on.
      inFlight.release();
      await childLive.catch(() => 'threw');
      await rc.quiet();
      await driveTree(db, s.e, runId);

      const tree = await judgeTree(db, runId);
      const propagate = c.policy === 'propagate';
      const expectedChild = propagate
        ? { status: 'Cancelled-or-Compensated', ends: 1, afterTheEnd: [], cancelRequested: true }
        : { status: c.hold === 'a2' ? 'Completed' : 'Compensated', ends: 1, afterTheEnd: [], cancelRequested: false };
      const got = tree.map((t) => ({
        ...t,
        status:
          propagate && t.depth > 0 && ['Cancelled', 'Compensated'].includes(t.status)
            ? 'Cancelled-or-Compensated'
            : t.status,
      }));
      expect({
        parentAtEnd: parentAtEnd.status,
        childCancelRequestedAtParentEnd: childAtParentEnd.cancel_requested_at !== null,
        root: got[0],
        child: { ...got[1], depth: undefined, policy: undefined, duplicateStepOutcomes: undefined, stuck: undefined },
        stuckOrDuplicated: got.filter((t) => t.stuck !== null || t.duplicateStepOutcomes.length > 0),
        grandchildren: got.filter((t) => t.depth === 2).map((t) => [t.status, t.afterTheEnd]),
      }).toEqual({
        parentAtEnd: endStatus,
        childCancelRequestedAtParentEnd: propagate,
        root: {
          depth: 0,
          policy: null,
          status: endStatus,
          ends: 1,
          afterTheEnd: [],
          duplicateStepOutcomes: [],
          cancelRequested: false,
          stuck: null,
        },
        child: {
          ...expectedChild,
          depth: undefined,
          policy: undefined,
          duplicateStepOutcomes: undefined,
          stuck: undefined,
        },
        stuckOrDuplicated: [],
        // A grandchild asked for after the cancellation reached A's record is never started, or is cancelled.
        grandchildren: got.filter((t) => t.depth === 2).map(() => ['Cancelled-or-Compensated', []]),
      });
      // Side effects: a1 once, a2 once; a3 and g1 never for a cancelled child; ua1 once when A compensated.
      const ran = s.ran;
      expect({
        a1: ran.a1,
        a2: ran.a2,
        a3: ran.a3 ?? 0,
        g1: ran.g1 ?? 0,
        ua1: ran.ua1 ?? 0,
        book: ran.book,
        side: ran.side,
      }).toEqual({
        a1: 1,
        a2: 1,
        a3: propagate || c.hold === 'ua1' ? 0 : 1,
        g1: 0,
        ua1: propagate || c.hold === 'ua1' ? 1 : 0,
        book: 1,
        side: 1,
      });
      // Nothing is written to the parent after its end except journaled refusals.
      const anomalies = await anomaliesOf(db, runId);
      expect(anomalies.filter((a) => !/^(write_refused|outcome_rejected)#/.test(a))).toEqual([]);
    });
});
