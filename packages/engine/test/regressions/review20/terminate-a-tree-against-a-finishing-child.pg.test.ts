import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { holdRuns, waitForWaiters } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { recordOf } from './record.ts';
import { startThreeLevelTree } from './support/three-level-tree.ts';

/**
 * ADR 0089. run.terminate closes a run's open 'propagate' tree in ONE transaction. A child finishing
 * at that moment locks itself, then its parent (`settleParentStep`); the terminate locks the tree
 * deepest first and the root last (lockOpenTree, the ADR's amendment), so it waits for the finishing
 * child while holding none of its ancestors: no lock cycle, the child's finish goes through, and the
 * tree ends Terminated with the operator's command applied once. The finishing child is played by a
 * connection of the test's own holding the leaf's row and then asking for its parent's.
 */
describe('terminate a three-level tree (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  const startTree = () => startThreeLevelTree(db, 'adr0089');

  async function judge(ids: readonly [string, string, string]) {
    const [r, m, l] = await Promise.all(ids.map((id) => recordOf(db, id)));
    return {
      runs: [r!.run, m!.run, l!.run].map((x) => [x.status, x.open]),
      ends: [r!.ends, m!.ends, l!.ends],
      afterTheEnd: [r!.afterTheEnd, m!.afterTheEnd, l!.afterTheEnd],
      leafSteps: l!.steps.map((s) => [s[0], s[2]]),
      leafRefused: l!.rejected,
    };
  }

  const terminatedTree = {
    runs: [
      ['Terminated', false],
      ['Terminated', false],
      ['Terminated', false],
    ],
    ends: [1, 1, 1],
    afterTheEnd: [[], [], []],
    leafSteps: [[1, 'Running']],
    leafRefused: [1],
  };

  it('reaches the grandchild in the same command; its late outcome is refused', async () => {
    const { e, ids, release, live, ran } = await startTree();
    expect(await e.terminate(ids[0], { reason: 'adr0089: stop the tree' })).toEqual({ terminated: true });
    const leaf = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: ids[2] } });
    expect((leaf.error as { message?: string }).message).toBe(
      `parent ${ids[1]} was terminated: parent ${ids[0]} was terminated: adr0089: stop the tree`,
    );
    release.open();
    await live;
    expect(await judge(ids)).toEqual(terminatedTree);
    expect(ran).toEqual(['work']);
  });

  it('a finishing child is waited for, not met in a lock cycle: it finishes, then the tree ends Terminated', async () => {
    if (!db.url) throw new Error('this test needs the PostgreSQL project');
    const { e, ids, release, live } = await startTree();
    // The "finishing child": the leaf's row, held (with a deadlock_timeout far above the test's waits).
    const holder = await holdRuns(db.url, [ids[2]], '30s');
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: ids[0] } });
    const applying = e.repairs.apply({
      kind: 'run.terminate',
      target: { runId: ids[0] },
      expected: { runStatus: run.status as 'Waiting' },
      actor: 'adr0089@example.test',
      reason: 'adr0089: stop the tree',
      idempotencyKey: `adr0089-${ids[0]}`,
    });
    await waitForWaiters(db, holder.pid);
    // ... then asks for its parent's row (mid), as a child's finish does. The terminate holds none of
    // the leaf's ancestors while it waits for the leaf, so this is granted at once.
    await holder.hold(ids[1]);
    // The child's finish, reduced to what matters here: the leaf's row ends Completed.
    await holder.client.query(`update sagaflow.flow_runs set status = 'Completed', finished_at = now() where id = $1`, [
      ids[2],
    ]);
    await holder.commit();
    const applied = await applying;
    expect(applied.status).toBe('applied');
    release.open();
    await live;
    const j = await judge(ids);
    expect({ runs: j.runs, ends: j.ends.slice(0, 2) }).toEqual({
      runs: [
        ['Terminated', false],
        ['Terminated', false],
        ['Completed', false],
      ],
      ends: [1, 1],
    });
    const audits = await db.prisma.repairCommand.findMany({ where: { target_id: { startsWith: ids[0] } } });
    expect(audits.map((a) => [a.command, a.status])).toEqual([['run.terminate', 'applied']]);
    // What the audit row says was ended is what was: the root and mid, not the leaf that finished first.
    const transitions = (audits[0]!.result as { effects?: { transitions?: { subject: string; to: string }[] } }).effects
      ?.transitions;
    expect(transitions?.map((t) => t.subject.split(' ')[1])).toEqual([ids[0], ids[1]]);
  });
});
