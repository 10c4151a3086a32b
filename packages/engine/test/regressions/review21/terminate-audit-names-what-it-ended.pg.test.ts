import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow, type Engine } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { holdRuns, waitForWaiters } from '../../support/held-rows.ts';
import { lockWaiters } from './lock-waiters.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';
import { recordOf } from '../review20/record.ts';
import { startThreeLevelTree } from '../review20/support/three-level-tree.ts';

/**
 * Review 21. The run.terminate repair plans its effects inside its transaction, under the ROOT's lock
 * only (`terminateRepair.plan` lists the open tree with plain reads), and then terminates the tree
 * run by run (ADR 0089). A descendant below the first level is not locked by the plan, so between the
 * plan's read and the perform's lock of that descendant's parent, the tree can change:
 *
 * - a grandchild whose finish was in flight (its own row locked, waiting for its parent's) commits
 *   Completed: the audit row said it went open -> Terminated;
 * - the mid-level run's worker starts a new grandchild: the perform terminates it, the audit row does
 *   not name it.
 *
 * The guarantee judged: the applied repair's audit row (and the result the operator is given) names,
 * as Terminated, exactly the runs that the command terminated. Every interleaving is driven by
 * progress: a connection of the test's own holds the mid-level run's row until pg_stat_activity shows
 * who waits behind it.
 */
describe('run.terminate: the audit row names what the command ended (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  const applyTerminate = async (e: Engine, runId: string, key: string) => {
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    return e.repairs.apply({
      kind: 'run.terminate',
      target: { runId },
      expected: { runStatus: run.status as 'Waiting' },
      actor: 'review21@example.test',
      reason: 'review21: stop the tree',
      idempotencyKey: key,
    });
  };

  /** The run ids the audit row says went to Terminated, and what each run actually ended as. */
  async function auditAgainstRecord(rootId: string, tree: string[]) {
    const [audit] = await db.prisma.repairCommand.findMany({ where: { target_id: { startsWith: rootId } } });
    const transitions =
      (audit?.result as { effects?: { transitions?: { subject: string; to: string }[] } } | null)?.effects
        ?.transitions ?? [];
    const said = transitions.filter((t) => t.to === 'Terminated').map((t) => /^run (\S+)/.exec(t.subject)![1]!);
    const terminated = (
      await db.prisma.flowRun.findMany({ where: { status: 'Terminated', id: { in: tree } }, select: { id: true } })
    ).map((r) => r.id);
    // Named by their place in the tree (root, mid, leaf), so a failure reads as which run is misreported.
    const name = (id: string) => ['root', 'mid', 'leaf'][tree.indexOf(id)] ?? id;
    return { said: said.map(name).sort(), terminated: terminated.map(name).sort() };
  }

  it('a grandchild that completes between the plan and the perform is not reported Terminated', async () => {
    if (!db.url) throw new Error('this test needs the PostgreSQL project');
    const tree = await startThreeLevelTree(db, 'review21-audit');
    const { e, release } = tree;
    const [runId, midId, leafId] = tree.ids;
    const liveLeaf = tree.live;

    // Something holds the mid-level run's row (a replay of it, another command): the leaf's finish
    // locks the leaf, records its end, and waits for its parent's row.
    const holder = await holdRuns(db.url, [midId]);
    release.open();
    await waitForWaiters(db, holder.pid, 1);
    // The terminate: root locked, plan read (the leaf is open: its finish has not committed), then the
    // perform waits for the mid-level row, behind the leaf's finish.
    const applying = applyTerminate(e, runId, `review21-audit-leaf-${runId}`);
    await lockWaiters(db, 2);
    await holder.commit();
    const applied = await applying;
    expect(await liveLeaf).toBe('finished');

    const [r, m, l] = await Promise.all([runId, midId, leafId].map((id) => recordOf(db, id)));
    // Whichever won, each run ends once, and nothing follows its end.
    expect({
      status: applied.status,
      ends: [r!.ends, m!.ends, l!.ends],
      afterTheEnd: [r!.afterTheEnd, m!.afterTheEnd, l!.afterTheEnd],
      audits: r!.audits,
    }).toEqual({
      status: 'applied',
      ends: [1, 1, 1],
      afterTheEnd: [[], [], []],
      audits: [['run.terminate', 'applied']],
    });
    // The leaf's finish committed first: it is Completed, not Terminated.
    expect([r!.run.status, m!.run.status, l!.run.status]).toEqual(['Terminated', 'Terminated', 'Completed']);
    // The operator's record must say what happened.
    const { said, terminated } = await auditAgainstRecord(runId, [runId, midId, leafId]);
    expect(said).toEqual(terminated);
    const returned = applied.effects.transitions.filter((t) => t.to === 'Terminated').map((t) => t.subject);
    expect(returned.some((s) => s.includes(leafId))).toBe(false);
  });

  it('a grandchild started between the plan and the perform is named in the audit row', async () => {
    if (!db.url) throw new Error('this test needs the PostgreSQL project');
    const reached = gate();
    const release = gate();
    const work = defineAction({ name: 'review21-audit2-leaf-work', run: async () => 'done' });
    const leaf = defineFlow({ name: 'review21-audit2-leaf', version: 1, run: async (ctx) => ctx.action(work, null) });
    const mid = defineFlow({
      name: 'review21-audit2-mid',
      version: 1,
      run: async (ctx) => {
        // The mid-level run's code is between its start and its ctx.child when the operator looks.
        reached.open();
        await release.promise;
        return ctx.child(leaf, null);
      },
    });
    const root = defineFlow({ name: 'review21-audit2-root', version: 1, run: async (ctx) => ctx.child(mid, null) });
    const e = bareEngine(db, { flows: [root, mid, leaf], actions: [work] });
    const { runId } = await e.startFlow(root, null);
    expect(await executeRun(e.runtime, runId)).toBe('parked');
    const midRun = await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: runId } });
    const liveMid = executeRun(e.runtime, midRun.id);
    await reached.promise;

    // The mid-level row is held: the ctx.child transaction of mid's replay waits for it.
    const holder = await holdRuns(db.url, [midRun.id]);
    release.open();
    await waitForWaiters(db, holder.pid, 1);
    const applying = applyTerminate(e, runId, `review21-audit-new-${runId}`);
    await lockWaiters(db, 2);
    await holder.commit();
    const applied = await applying;
    await liveMid;

    const leafRun = await waitFor('the new grandchild', () =>
      db.prisma.flowRun.findFirst({ where: { parent_run_id: midRun.id } }).then((x) => x ?? undefined),
    );
    const [r, m, l] = await Promise.all([runId, midRun.id, leafRun.id].map((id) => recordOf(db, id)));
    expect({
      status: applied.status,
      runs: [r!.run.status, m!.run.status, l!.run.status],
      ends: [r!.ends, m!.ends, l!.ends],
      afterTheEnd: [r!.afterTheEnd, m!.afterTheEnd, l!.afterTheEnd],
    }).toEqual({
      status: 'applied',
      runs: ['Terminated', 'Terminated', 'Terminated'],
      ends: [1, 1, 1],
      afterTheEnd: [[], [], []],
    });
    const { said, terminated } = await auditAgainstRecord(runId, [runId, midRun.id, leafRun.id]);
    expect(said).toEqual(terminated);
  });
});
