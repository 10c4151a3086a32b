import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { fuzzActions, gates, saga, scripts } from '../review40/support/fuzz-saga.ts';
import { gateEverything, snapshotRun, until } from './support/run-rows.ts';

type T = Awaited<ReturnType<typeof openTestEngine>>;

/**
 * Review 43: a gated bulk (ADR 0020) drafted over runs a live worker holds at step 2, approved after
 * some of them moved on: each item decided on its own, the moved ones refused without a change.
 */
describe(`review 43: a bulk approval whose items partly conflict (${testDbKind()})`, () => {
  let t!: T;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [saga], actions: fuzzActions, config: { worker: { concurrency: 6 } } });
    await gateEverything(t);
    t.engine.startWorkers();
  });
  afterAll(async () => {
    for (const g of gates.values()) g(true);
    await t?.closeAll();
  });

  async function parked() {
    const key = randomUUID();
    scripts.set(key, { steps: ['ok', 'gate', 'ok'] });
    const { runId } = await t.engine.startFlow(saga, { key });
    await until(
      async () => (gates.has(`${key}:2`) ? t.engine.getRun(runId) : null),
      (d) => d?.run.status === 'Running',
      'step 2 at its gate',
    );
    return { key, runId };
  }

  it('a bulk cancel approved after one of its runs completed: the others are cancelled, that one is untouched', async () => {
    const runs = [await parked(), await parked(), await parked()];
    const bulk = {
      kind: 'run.cancel',
      actor: 'r43-drafter',
      reason: 'review 43 bulk',
      idempotencyKey: randomUUID(),
      items: runs.map((r) => ({ target: { runId: r.runId }, expected: { runStatus: 'Running' } })),
    };
    const drafted = await t.engine.approvals.submitBulk(bulk);
    if (!('status' in drafted) || drafted.status !== 'awaiting_approval') throw new Error('bulk not gated');
    // The middle run moves on and completes before the approval.
    const moved = runs[1]!;
    gates.get(`${moved.key}:2`)!(true);
    gates.delete(`${moved.key}:2`);
    await until(
      async () => ({
        d: (await t.engine.getRun(moved.runId))!,
        jobs: await t.db.prisma.job.count({ where: { run_id: moved.runId } }),
      }),
      (x) => x.d.run.status === 'Completed' && x.jobs === 0,
      'the middle run to complete',
    );
    const before = await snapshotRun(t, moved.runId);
    const a = await t.engine.approvals.approve(drafted.approvalId, 'r43-approver');
    expect(a).toMatchObject({ status: 'applied', decidedBy: 'r43-approver', result: { applied: 2 } });
    expect(await snapshotRun(t, moved.runId), 'the item that conflicted changed its run').toEqual(before);
    const items = (a.result as { items: { target: { id: string }; outcome: string }[] }).items;
    expect(items.map((i) => [i.target.id, i.outcome])).toEqual([
      [runs[0]!.runId, 'applied'],
      [moved.runId, 'conflict'],
      [runs[2]!.runId, 'applied'],
    ]);
    for (const r of runs) {
      const rows = await t.db.prisma.repairCommand.findMany({ where: { target_id: r.runId } });
      expect(rows.map((x) => [x.status, x.actor, x.approved_by, x.approval_id])).toEqual([
        [r === moved ? 'conflict' : 'applied', 'r43-drafter', 'r43-approver', drafted.approvalId],
      ]);
    }
    // Approving again, or resuming, decides nothing more.
    await expect(t.engine.approvals.approve(drafted.approvalId, 'r43-second')).rejects.toMatchObject({
      code: 'approval_decided',
    });
    t.clock.advance(3_600_000);
    expect(await t.engine.approvals.resumeInterrupted()).toBe(0);
    for (const r of runs) {
      const g = gates.get(`${r.key}:2`);
      gates.delete(`${r.key}:2`);
      g?.(true);
    }
    for (const r of [runs[0]!, runs[2]!])
      await until(
        async () => (await t.engine.getRun(r.runId))!.run.status,
        (s) => s === 'Cancelled',
        'a cancelled run to end Cancelled',
      );
  });
});
