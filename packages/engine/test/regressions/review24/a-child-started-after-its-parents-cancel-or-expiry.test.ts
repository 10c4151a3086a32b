import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { recordOf } from '../review20/record.ts';
import { childrenOf, runDueWakes, trackedDeps } from '../review23/support/sibling-children.ts';
import { lateParent } from './support/late-flows.ts';

/**
 * Review 24 (ADR 0093, decision 2). `Promise.all([ctx.child(A, { cancellation }), ctx.action(side)])` after a
 * booking: the first replay (R1) asked for A, and A's start is held at a gate (its input check) while the
 * parent is cancelled (engine.cancel), cancelled with a cleanup window that closes before A's start commits,
 * or expired by the monitor's sweep (run deadline passed). R1 also holds the booking's completed outcome (in its
 * buffer) and its claim of `side` (at a gate): `side`'s claim goes first, carrying the booking's outcome, and
 * meets the run as the cancel or the expiry left it (the expiry expired the booking's Running row: the outcome
 * is rejected and R1 is stale). Then A's start commits.
 *
 * Guarantees: a 'propagate' A is cancel-requested by its own start, ends Cancelled once and runs no action;
 * an 'abandon' A gets no cancel request and runs to its end; the parent ends once (Cancelled, or Expired) and
 * nothing follows its end; each child position has at most one child run; nothing is left open.
 */
describe(`a child started after its parent's cancel or expiry (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  const ways = ['cancel', 'cancel whose cleanup window closed', 'expiry'] as const;
  for (const way of ways)
    for (const policy of ['propagate', 'abandon'] as const)
      it(`${way}; the '${policy}' child's start commits after it`, async () => {
        const s = lateParent(db, { shape: 'child+step', policy });
        const runId = await s.start(way === 'expiry' ? { expiresInSeconds: 60 } : {});
        const start = s.holdStart();
        const claim = s.holdClaim('side');
        const r1 = trackedDeps(db, s.e.runtime);
        const live = executeRun(r1.deps, runId);
        // R1 holds the booking's completed outcome in its buffer, its start of A and its claim of `side`.
        await start.reached;
        await claim.reached;
        if (way === 'expiry') {
          s.clock.advance(61_000);
          expect((await s.e.sweepExpiredRuns()).expired).toEqual([runId]);
        } else {
          expect(await s.e.cancel(runId, { reason: 'review24', cleanupSeconds: 30 })).toEqual({ requested: true });
          if (way === 'cancel whose cleanup window closed') s.clock.advance(31_000);
        }
        // `side`'s claim goes first: its transaction carries the booking's outcome, and meets the run as
        // the cancel or the expiry left it. Then A's start.
        // The claim meets the cancellation (or the booking's rejected outcome): R1 stops and parks.
        claim.release();
        expect(await live).toBe('parked');
        await r1.quiet();
        r1.mark();
        start.release();
        await r1.quiet();
        for (let i = 0; i < 4; i++) {
          await runDueWakes(db, s.e, runId);
          for (const c of await childrenOf(db, runId)) await runDueWakes(db, s.e, c.id);
        }

        const parent = await recordOf(db, runId);
        const kids = await childrenOf(db, runId);
        const judged = await Promise.all(
          kids.map(async (k) => {
            const r = await recordOf(db, k.id);
            return [k.parent_cancel_policy, r.run.status, r.ends, r.afterTheEnd, k.cancel_requested_at !== null];
          }),
        );
        const propagate = policy === 'propagate';
        const parentRow = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
        expect({
          parent: [parent.run.status, parent.ends, parent.afterTheEnd, parent.run.open],
          stuck: parentRow.stuck_reason,
          children: judged,
          workA: s.ran['work-a'] ?? 0,
        }).toEqual({
          parent: [way === 'expiry' ? 'Expired' : 'Cancelled', 1, [], false],
          stuck: null,
          // A exists (its start committed while the parent was open, cancel-requested) or, when the parent's
          // end came first, was never started.
          children: kids.length === 0 ? [] : [[policy, propagate ? 'Cancelled' : 'Completed', 1, [], propagate]],
          workA: propagate || kids.length === 0 ? 0 : 1,
        });
      });

  for (const policy of ['propagate', 'abandon'] as const)
    it(`expiry; the '${policy}' child's start is let go as R1 stops on the rejected booking`, async () => {
      const s = lateParent(db, { shape: 'child+step', policy });
      const runId = await s.start({ expiresInSeconds: 60 });
      const start = s.holdStart();
      const claim = s.holdClaim('side');
      // R1's transactions after the arm: 1 = side's claim (it meets the booking's rejected outcome: R1 is
      // stale and stops), 2 = its park, held before it begins.
      const r1 = trackedDeps(db, s.e.runtime);
      const live = executeRun(r1.deps, runId);
      await start.reached;
      await claim.reached;
      await r1.quiet();
      s.clock.advance(61_000);
      expect((await s.e.sweepExpiredRuns()).expired).toEqual([runId]);
      // `side`'s claim carries the booking's outcome, which the expiry rejected: R1 is stale and stops. Its
      // transactions settle; then its start of A is let go (R1's `live` is awaited only after it).
      r1.mark();
      claim.release();
      await r1.quiet();
      start.release();
      expect(await live).toBe('parked');
      await r1.quiet();
      for (let i = 0; i < 4; i++) {
        await runDueWakes(db, s.e, runId);
        for (const c of await childrenOf(db, runId)) await runDueWakes(db, s.e, c.id);
      }
      const parent = await recordOf(db, runId);
      const parentRow = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      expect({
        parent: [parent.run.status, parent.ends, parent.afterTheEnd, parent.run.open],
        stuck: parentRow.stuck_reason,
      }).toEqual({ parent: ['Expired', 1, [], false], stuck: null });
    });
});
