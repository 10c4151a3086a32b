import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { holdRuns, waitForWaiters } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { bareEngine, gate } from '../harness.ts';
import { recordOf } from './record.ts';

/**
 * ADR 0089. run.terminate closes a run's open 'propagate' tree in ONE transaction: the root, then each
 * child, depth first, each locked FOR UPDATE after its parent. A child finishing at that moment takes
 * the opposite order (itself, then its parent), so the two can close a lock cycle. PostgreSQL rolls
 * one back; whichever it is, the tree must end Terminated and the operator's command must be applied
 * once. The finishing child is played by a connection of the test's own holding the leaf's row and
 * then asking for its parent's, as `settleParentStep` does.
 */
describe('terminate a three-level tree (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  async function startTree() {
    const reached = gate();
    const release = gate();
    const ran: string[] = [];
    const work = defineAction({
      name: 'adr0089-leaf-work',
      run: async () => {
        ran.push('work');
        reached.open();
        await release.promise;
        return 'done';
      },
    });
    const leaf = defineFlow({ name: 'adr0089-leaf', version: 1, run: async (ctx) => ctx.action(work, null) });
    const mid = defineFlow({ name: 'adr0089-mid', version: 1, run: async (ctx) => ctx.child(leaf, null) });
    const root = defineFlow({ name: 'adr0089-root', version: 1, run: async (ctx) => ctx.child(mid, null) });
    const e = bareEngine(db, { flows: [root, mid, leaf], actions: [work] });
    const { runId } = await e.startFlow(root, null);
    expect(await executeRun(e.runtime, runId)).toBe('parked');
    const midRun = await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: runId } });
    expect(await executeRun(e.runtime, midRun.id)).toBe('parked');
    const leafRun = await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: midRun.id } });
    const live = executeRun(e.runtime, leafRun.id);
    await reached.promise;
    return { e, ids: [runId, midRun.id, leafRun.id] as const, release, live, ran };
  }

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

  for (const victim of ['the finishing child', 'the terminate'] as const) {
    it(`a lock cycle with a finishing child: PostgreSQL rolls back ${victim}, the tree ends Terminated`, async () => {
      if (!db.url) throw new Error('this test needs the PostgreSQL project');
      const { e, ids, release, live } = await startTree();
      // The "finishing child": the leaf's row, held; the terminate then waits for it under mid's lock.
      const holder = await holdRuns(db.url, [ids[2]], victim === 'the finishing child' ? '50ms' : '30s');
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
      // ... and then asks for its parent's row (mid), as a child's finish does: a cycle.
      const parentLock = holder.hold(ids[1]).then(
        () => 'locked' as const,
        (err: { code?: string }) => err.code ?? 'error',
      );
      if (victim === 'the finishing child') {
        expect(await parentLock).toBe('40P01');
        await holder.rollback();
      } else {
        expect(await parentLock).toBe('locked');
        await holder.commit();
      }
      const applied = await applying;
      expect(applied.status).toBe('applied');
      release.open();
      await live;
      expect(await judge(ids)).toEqual(terminatedTree);
      const audits = await db.prisma.repairCommand.findMany({ where: { target_id: { startsWith: ids[0] } } });
      expect(audits.map((a) => [a.command, a.status])).toEqual([['run.terminate', 'applied']]);
    });
  }
});
