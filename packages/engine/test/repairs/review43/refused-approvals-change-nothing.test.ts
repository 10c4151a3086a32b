import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RepairCommand } from '../../../src/index.ts';
import type { RunDetail } from '../../../src/runtime/run-view.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { draft, fuzzActions, gates, saga, scripts, type Behaviour } from '../review40/support/fuzz-saga.ts';
import { gateEverything, runKinds, snapshotRun, until } from './support/run-rows.ts';

type T = Awaited<ReturnType<typeof openTestEngine>>;

const refusedCode: unknown = expect.stringMatching(/^repair_(conflict|refused)$/);

/**
 * Review 43: a repair answered repair_conflict or repair_refused, directly or through a
 * second operator's approval, leaves every row of its run exactly as it was (ADR 0016, ADR 0020):
 * only the audit row and the approval's own row record the refusal.
 */
describe(`review 43: a refused repair changes nothing, directly or via an approval (${testDbKind()})`, () => {
  let t!: T;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [saga], actions: fuzzActions, config: { worker: { concurrency: 4 } } });
    await gateEverything(t);
    t.engine.startWorkers();
  });
  afterAll(async () => {
    for (const g of gates.values()) g(true);
    await t?.closeAll();
  });

  /** A run whose step 2 is Running on a live worker, held at its gate. */
  async function parkedAtStep2(steps: Behaviour[] = ['ok', 'gate', 'ok']) {
    const key = randomUUID();
    scripts.set(key, { steps });
    const { runId } = await t.engine.startFlow(saga, { key });
    const seen = await until(
      async () => (gates.has(`${key}:2`) ? t.engine.getRun(runId) : null),
      (d) => d?.run.status === 'Running' && d.actions.find((a) => a.sequence === 2)?.status === 'Running',
      'step 2 at its gate',
    );
    return { key, runId, seen: seen! };
  }

  const settled = (runId: string) =>
    until(
      async () => ({
        d: (await t.engine.getRun(runId))!,
        jobs: await t.db.prisma.job.count({ where: { run_id: runId } }),
      }),
      (x) => x.d.run.status !== 'Running' && x.d.run.status !== 'Compensating' && x.jobs === 0,
      'the run to settle',
    );

  const commandsFor = (seen: RunDetail) =>
    runKinds.flatMap((k) =>
      k === 'run.retry_step' || k === 'run.reclaim_step' || k === 'run.complete_step' || k === 'run.resume_from_step'
        ? [draft(k, seen, 1), draft(k, seen, 2), draft(k, seen, 3)]
        : [draft(k, seen, 1)],
    );

  it('a stale or refused repair applied directly leaves the run exactly as it was', async () => {
    const { runId, seen } = await parkedAtStep2();
    const before = await snapshotRun(t, runId);
    const stale: RunDetail = { ...seen, run: { ...seen.run, status: 'Waiting' } };
    let refusedLive = 0;
    for (const cmd of [...commandsFor(stale), ...commandsFor(seen)]) {
      const preview = await t.engine.repairs.preview(cmd);
      if (preview.applicable) continue; // would apply: not a refusal
      await expect(t.engine.repairs.apply(cmd), `${cmd.kind}`).rejects.toMatchObject({
        code: refusedCode,
      });
      if (preview.expectedHolds) refusedLive += 1;
      expect(await snapshotRun(t, runId), `${cmd.kind} changed the run`).toEqual(before);
    }
    // reclaim of the live worker's step 2, retry of Running steps and so on are refused, not conflicts.
    expect(refusedLive).toBeGreaterThan(0);
  });

  for (const outcome of ['succeeds', 'fails'] as const)
    it(`approvals drafted while step 2 runs are refused once it ${outcome}, and change nothing of the run`, async () => {
      const { key, runId, seen } = await parkedAtStep2();
      const drafts: { cmd: RepairCommand; approvalId: string }[] = [];
      for (const cmd of commandsFor(seen)) {
        const r = await t.engine.approvals.submit(cmd).catch((err: { code?: string }) => err);
        if ('status' in r && r.status === 'awaiting_approval') drafts.push({ cmd, approvalId: r.approvalId });
      }
      expect(drafts.length).toBeGreaterThan(5);
      const g = gates.get(`${key}:2`)!;
      gates.delete(`${key}:2`);
      g(outcome === 'succeeds');
      const { d } = await settled(runId);
      expect(d.run.status).toBe(outcome === 'succeeds' ? 'Completed' : 'Compensated');
      const before = await snapshotRun(t, runId);
      for (const { cmd, approvalId } of drafts) {
        const err = await t.engine.approvals.approve(approvalId, 'r43-approver').then(
          (v) => ({ applied: v }),
          (e: { code?: string }) => e,
        );
        expect(err, `${cmd.kind} ${JSON.stringify(cmd.target)} applied over a finished run`).toMatchObject({
          code: refusedCode,
        });
        expect(await snapshotRun(t, runId), `approving ${cmd.kind} changed the run`).toEqual(before);
        const approval = await t.engine.approvals.get(approvalId);
        const rows = await t.db.prisma.repairCommand.findMany({ where: { approval_id: approvalId } });
        expect(rows.map((r) => [r.status, r.actor, r.approved_by])).toEqual([
          [approval!.status, cmd.actor, 'r43-approver'],
        ]);
        expect(['conflict', 'refused']).toContain(approval!.status);
      }
    });
});
