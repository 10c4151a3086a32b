import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import type { Engine } from '../../../src/index.ts';
import { holdRuns, waitForWaiters } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { recordOf } from '../review20/record.ts';
import { startThreeLevelTree } from '../review20/support/three-level-tree.ts';
import { lockWaiters } from './lock-waiters.ts';

/**
 * Review 21. Two operators: one terminates the root of a three-level 'propagate' tree (root, mid,
 * leaf; the leaf mid-step), the other terminates a descendant (mid or leaf) at the same moment. Each is
 * a run.terminate repair. The descendant's terminate locks it and then, settling its parent's waiting
 * step, its parent's row; the root's terminate locks the parent and then the descendant: a lock cycle
 * between two operator transactions (ADR 0089). PostgreSQL rolls one back; it runs again (ADR 0074).
 *
 * Designed, whichever is rolled back: all three runs end Terminated, each once, nothing after any
 * run's end; the root's repair is applied; the other is applied, or refused/conflicted with a reason
 * (never an error thrown to the operator, never a half-done tree).
 *
 * Progress only: a connection of the test's own holds the row where the two must meet, until
 * pg_stat_activity shows both commands waiting.
 */
describe('terminate the root against a terminate of a descendant (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  async function startTree() {
    const { e, ids, release, live } = await startThreeLevelTree(db, 'review21-tt');
    return { e, ids: { root: ids[0], mid: ids[1], leaf: ids[2] }, release, live };
  }

  const terminate = async (e: Engine, runId: string, who: string) => {
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    return e.repairs
      .apply({
        kind: 'run.terminate',
        target: { runId },
        expected: { runStatus: run.status as 'Waiting' },
        actor: `${who}@example.test`,
        reason: `review21: ${who} stops it`,
        idempotencyKey: `review21-tt-${who}-${runId}`,
      })
      .then(
        (r) => ({ status: r.status, blockers: [] as string[] }),
        (err: { code?: string; message?: string; details?: { blockers?: string[] } }) => ({
          status: err.code ?? 'thrown',
          blockers: err.details?.blockers ?? [err.message ?? '?'],
        }),
      );
  };

  for (const other of ['mid', 'leaf'] as const)
    for (const first of ['root', other] as const)
      it(`terminate(root) against terminate(${other}); ${first}'s command locks first`, async () => {
        if (!db.url) throw new Error('this test needs the PostgreSQL project');
        const { e, ids, release, live } = await startTree();
        const target = ids[other];
        const parentOfTarget = other === 'mid' ? ids.root : ids.mid;
        // Where they meet: the target's parent (the root's command goes through it to the target, the
        // target's command asks for it second), or the target itself.
        const holder = await holdRuns(db.url, [first === 'root' ? parentOfTarget : target]);
        let rootDone: ReturnType<typeof terminate>;
        let otherDone: ReturnType<typeof terminate>;
        if (first === 'root') {
          rootDone = terminate(e, ids.root, 'root-operator');
          await waitForWaiters(db, holder.pid, 1);
          otherDone = terminate(e, target, 'other-operator');
        } else {
          otherDone = terminate(e, target, 'other-operator');
          await waitForWaiters(db, holder.pid, 1);
          rootDone = terminate(e, ids.root, 'root-operator');
        }
        await lockWaiters(db, 2);
        await holder.commit();
        const [rootResult, otherResult] = await Promise.all([rootDone, otherDone]);
        release.open();
        await live;

        const [r, m, l] = await Promise.all([ids.root, ids.mid, ids.leaf].map((id) => recordOf(db, id)));
        expect({
          runs: [r!.run, m!.run, l!.run].map((x) => [x.status, x.open]),
          ends: [r!.ends, m!.ends, l!.ends],
          afterTheEnd: [r!.afterTheEnd, m!.afterTheEnd, l!.afterTheEnd],
          root: rootResult,
          rootAudits: r!.audits,
        }).toEqual({
          runs: [
            ['Terminated', false],
            ['Terminated', false],
            ['Terminated', false],
          ],
          ends: [1, 1, 1],
          afterTheEnd: [[], [], []],
          root: { status: 'applied', blockers: [] },
          rootAudits: [['run.terminate', 'applied']],
        });
        // The other command: applied, or turned away with a stated reason, and audited as such once.
        const otherAudits = (other === 'mid' ? m! : l!).audits;
        if (otherResult.status === 'applied') expect(otherAudits).toEqual([['run.terminate', 'applied']]);
        else {
          expect(['repair_conflict', 'repair_refused']).toContain(otherResult.status);
          expect(otherResult.blockers.length).toBeGreaterThan(0);
          expect(otherAudits).toHaveLength(1);
          expect(['conflict', 'refused']).toContain(otherAudits[0]![1]);
        }
        // The leaf's step stays Running; its late outcome is turned away once.
        expect([l!.steps.map((s) => [s[0], s[2]]), l!.rejected]).toEqual([[[1, 'Running']], [1]]);
      });
});
