import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { recordOf } from '../review20/record.ts';
import { childrenOf, replayChild, runDueWakes, trackedDeps } from '../review23/support/sibling-children.ts';
import { lateParent } from './support/late-flows.ts';

/** Every run of the tree under `rootId` (the root first), with what each test judges of it. */
async function tree(db: Database, rootId: string) {
  const out: { id: string; depth: number; row: Awaited<ReturnType<typeof childrenOf>>[number] | null }[] = [];
  const walk = async (id: string, depth: number) => {
    for (const c of await childrenOf(db, id)) {
      out.push({ id: c.id, depth, row: c });
      await walk(c.id, depth + 1);
    }
  };
  await walk(rootId, 1);
  return Promise.all(
    out.map(async ({ id, depth, row }) => {
      const r = await recordOf(db, id);
      return {
        depth,
        policy: row?.parent_cancel_policy,
        status: r.run.status,
        ends: r.ends,
        afterTheEnd: r.afterTheEnd,
        cancelRequested: row?.cancel_requested_at !== null,
      };
    }),
  );
}

async function endEvent(db: Database, runId: string) {
  const p = await recordOf(db, runId);
  const end = await db.prisma.flowEvent.findFirst({
    where: { run_id: runId, type: { startsWith: 'run.' }, NOT: { type: { in: ['run.started', 'run.unstuck'] } } },
    orderBy: { id: 'desc' },
  });
  return {
    status: p.run.status,
    ends: p.ends,
    afterTheEnd: p.afterTheEnd,
    childrenCancelled: ((end?.data as { children_cancelled?: string[] } | null)?.children_cancelled ?? []).length,
  };
}

/**
 * Review 24 (ADR 0093, decision 3). A run ends while children are open: a flow that returns Completed without
 * awaiting its child, a three-level tree, and a parent closed by the engine's run timeout (TimedOut).
 *
 * Guarantees: the parent ends once and nothing follows its end; every open 'propagate' child (and grandchild)
 * has its cancellation requested by that end, is listed in children_cancelled (the direct ones), ends Cancelled
 * once and runs no action it had not run yet; an 'abandon' child is left alone (no cancel request) and runs to
 * its own end.
 */
describe(`a run's end with open children (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  for (const policy of ['propagate', 'abandon'] as const)
    it(`an un-awaited '${policy}' child whose start is still out when its parent returns Completed`, async () => {
      const s = lateParent(db, { shape: 'unawaited-child', policy });
      const runId = await s.start();
      const start = s.holdStart();
      const r1 = trackedDeps(db, s.e.runtime);
      const live = executeRun(r1.deps, runId);
      await start.reached;
      s.letParentReturn();
      expect(await live).toBe('finished');
      r1.mark();
      start.release();
      await r1.quiet();
      await runDueWakes(db, s.e, runId);
      // The start met its parent closed: no child exists, nothing follows the parent's end.
      expect({ parent: await endEvent(db, runId), tree: await tree(db, runId), ran: s.ran }).toEqual({
        parent: { status: 'Completed', ends: 1, afterTheEnd: [], childrenCancelled: 0 },
        tree: [],
        ran: { book: 1 },
      });
    });

  for (const policy of ['propagate', 'abandon'] as const)
    for (const grandchild of [false, true])
      it(`a step's failure ends the parent while its '${policy}' child is open${grandchild ? ' on its grandchild' : ''}`, async () => {
        const s = lateParent(db, {
          shape: 'child+step',
          sideEnds: 'fails-for-good',
          policy,
          grandchild,
        });
        const runId = await s.start();
        const side = s.holdAction('side');
        const r1 = trackedDeps(db, s.e.runtime);
        const live = executeRun(r1.deps, runId);
        await side.reached;
        expect(await live).toBe('parked');
        await r1.quiet();
        // The child runs its action (and, with a grandchild, starts it and parks on it): it stays open.
        if (grandchild) expect(await replayChild(db, s.e, runId, 2)).toBe('Waiting');
        r1.mark();
        side.release();
        await r1.quiet();
        // The parent's next replay meets the failure and ends the parent while the child is open.
        expect(await executeRun(s.e.runtime, runId)).toBe('finished');
        const atEnd = await endEvent(db, runId);
        const child = (await childrenOf(db, runId))[0]!;
        for (let i = 0; i < 6; i++) {
          await runDueWakes(db, s.e, runId);
          await runDueWakes(db, s.e, child.id);
        }
        const cancelled = policy === 'propagate';
        const status = 'Failed';
        const kid = (depth: number, policyOf: string) => ({
          depth,
          policy: policyOf,
          status: cancelled ? 'Cancelled' : 'Completed',
          ends: 1,
          afterTheEnd: [],
          cancelRequested: cancelled,
        });
        expect({
          parent: atEnd,
          final: await endEvent(db, runId),
          tree: await tree(db, runId),
          ran: s.ran,
        }).toEqual({
          parent: { status, ends: 1, afterTheEnd: [], childrenCancelled: cancelled ? 1 : 0 },
          final: { status, ends: 1, afterTheEnd: [], childrenCancelled: cancelled ? 1 : 0 },
          tree: grandchild ? [kid(1, policy), kid(2, 'propagate')] : [kid(1, policy)],
          ran: {
            book: 1,
            side: 1,
            // A child cancelled before its first replay runs nothing; one that ran its action (it was
            // waiting on its grandchild) ran it once, and the cancelled grandchild runs nothing.
            ...(grandchild || !cancelled ? { 'work-a': 1 } : {}),
            ...(grandchild && !cancelled ? { 'work-g': 1 } : {}),
          },
        });
      });

  for (const policy of ['propagate', 'abandon'] as const)
    it(`the run timeout closes a parent waiting on its '${policy}' child (TimedOut)`, async () => {
      const s = lateParent(db, { shape: 'child+step', policy });
      const runId = await s.start();
      const r1 = trackedDeps(db, s.e.runtime);
      expect(await executeRun(r1.deps, runId)).toBe('parked');
      await r1.quiet();
      await db.prisma.flowRun.update({
        where: { id: runId },
        data: { run_timeout_at: new Date(s.clock.now().getTime() - 1000) },
      });
      expect(await executeRun(s.e.runtime, runId)).toBe('finished');
      const atEnd = await endEvent(db, runId);
      await runDueWakes(db, s.e, runId);
      const cancelled = policy === 'propagate';
      expect({ parent: atEnd, final: await endEvent(db, runId), tree: await tree(db, runId), ran: s.ran }).toEqual({
        parent: { status: 'TimedOut', ends: 1, afterTheEnd: [], childrenCancelled: cancelled ? 1 : 0 },
        final: { status: 'TimedOut', ends: 1, afterTheEnd: [], childrenCancelled: cancelled ? 1 : 0 },
        tree: [
          {
            depth: 1,
            policy,
            status: cancelled ? 'Cancelled' : 'Completed',
            ends: 1,
            afterTheEnd: [],
            cancelRequested: cancelled,
          },
        ],
        ran: cancelled ? { book: 1, side: 1 } : { book: 1, side: 1, 'work-a': 1 },
      });
    });
});
