import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { checkInvariants, draft, fuzzActions, gates, saga, scripts } from '../review40/support/fuzz-saga.ts';
import { gateEverything, snapshotRun, until } from './support/run-rows.ts';

type T = Awaited<ReturnType<typeof openTestEngine>>;

/**
 * Review 43 (3): run.reclaim_step, gated, of a step whose worker really stopped (it claimed step 2,
 * crashed before running it, and its pool was stopped: the workers row says stopped), decided by a
 * second operator while the run is kicked, or while the same reclaim is approved twice.
 */
describe(`review 43: an approved reclaim of a step whose worker stopped (${testDbKind()})`, () => {
  let t!: T;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [saga], actions: fuzzActions, config: { worker: { concurrency: 4 } } });
    await gateEverything(t);
  });
  afterAll(async () => {
    for (const g of gates.values()) g(true);
    await t?.closeAll();
  });

  /** A run whose step 2 is Running, claimed by a worker that crashed and whose pool then stopped. */
  async function orphanedStep2() {
    const key = randomUUID();
    scripts.set(key, { steps: ['ok', 'ok', 'ok'] });
    t.faults.crashAfterClaim('r40-step-2');
    t.engine.startWorkers();
    const { runId } = await t.engine.startFlow(saga, { key });
    await until(
      async () => (await t.engine.getRun(runId))!,
      (d) => d.run.status === 'Running' && d.actions.find((a) => a.sequence === 2)?.status === 'Running',
      'step 2 claimed',
    );
    expect((await t.engine.stopWorkers(5_000)).drained).toBe(true);
    const seen = (await t.engine.getRun(runId))!;
    const cmd = { ...draft('run.reclaim_step', seen, 2), actor: 'r43-drafter' };
    const preview = await t.engine.repairs.preview(cmd);
    expect(preview.blockers, 'the stopped worker counts as gone').toEqual([]);
    const r = await t.engine.approvals.submit(cmd);
    if (r.status !== 'awaiting_approval') throw new Error(`not gated: ${r.status}`);
    return { key, runId, approvalId: r.approvalId };
  }

  /** Workers on until the run finishes; the crashed delivery's job is left locked until its lock lapses. */
  async function settle(runId: string) {
    t.engine.startWorkers();
    const { d } = await until(
      async () => ({ d: (await t.engine.getRun(runId))! }),
      (x) => x.d.run.finishedAt !== null,
      'the run to finish',
    );
    t.clock.advance(120_000);
    await until(
      () => t.db.prisma.job.count({ where: { run_id: runId } }),
      (n) => n === 0,
      'the finished run to have no job',
    );
    await t.engine.stopWorkers(5_000);
    return d;
  }

  const audited = async (approvalId: string) =>
    (await t.db.prisma.repairCommand.findMany({ where: { approval_id: approvalId } })).map((r) => ({
      id: r.id,
      status: r.status,
      actor: r.actor,
      approvedBy: r.approved_by,
    }));

  it('two approvers at once: one reclaims, once; the step runs again as attempt 2 and the run completes', async () => {
    const { key, runId, approvalId } = await orphanedStep2();
    const rs = await Promise.all(
      ['r43-ben', 'r43-cy'].map((who) =>
        t.engine.approvals.approve(approvalId, who).then(
          (v) => v.status,
          (e: { code?: string }) => e.code,
        ),
      ),
    );
    expect(rs.sort()).toEqual(['applied', 'approval_decided']);
    const rows = await audited(approvalId);
    expect(rows).toMatchObject([{ status: 'applied', actor: 'r43-drafter' }]);
    expect(['r43-ben', 'r43-cy']).toContain(rows[0]!.approvedBy);
    const d = await settle(runId);
    expect(d.run.status).toBe('Completed');
    expect(d.actions.find((x) => x.sequence === 2)).toMatchObject({ status: 'Completed', attempts: 2 });
    expect(
      await t.db.prisma.flowEvent.count({ where: { run_id: runId, type: 'step.reclaimed' } }),
      'reclaimed exactly once',
    ).toBe(1);
    await checkInvariants(
      t,
      runId,
      key,
      rows.map((r) => r.id),
    );
  });

  it('a kick reclaims the step first: the approved reclaim is then refused and changes nothing of the run', async () => {
    const { key, runId, approvalId } = await orphanedStep2();
    expect(await t.engine.kick(runId)).toMatchObject({ kicked: true });
    const before = await snapshotRun(t, runId);
    const r = await t.engine.approvals.approve(approvalId, 'r43-ben').then(
      (v) => v.status,
      (e: { code?: string }) => e.code,
    );
    expect(r).toMatch(/^repair_(conflict|refused)$/);
    expect(await snapshotRun(t, runId)).toEqual(before);
    const a = await t.engine.approvals.get(approvalId);
    expect(await audited(approvalId)).toMatchObject([
      { status: a?.status, actor: 'r43-drafter', approvedBy: 'r43-ben' },
    ]);
    const d = await settle(runId);
    expect(d.run.status).toBe('Completed');
    expect(d.actions.find((x) => x.sequence === 2)).toMatchObject({ status: 'Completed', attempts: 2 });
    await checkInvariants(t, runId, key, []);
  });

  it('DEFECT: a reclaim refused because a kick already reclaimed the step does not blame a stopped worker as "not known to be gone"', async () => {
    const { runId, approvalId } = await orphanedStep2();
    const owner = (await t.db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 2 } })).claimed_by!;
    expect(await t.engine.kick(runId)).toMatchObject({ kicked: true });
    // The owner is stopped (the workers row says so): that is not in doubt.
    expect((await t.db.prisma.worker.findUniqueOrThrow({ where: { id: owner } })).stopped_at).not.toBeNull();
    await t.engine.approvals.approve(approvalId, 'r43-ben').catch(() => null);
    const a = await t.engine.approvals.get(approvalId);
    const blockers = ((a?.result ?? {}) as { blockers?: string[] }).blockers ?? [];
    await settle(runId);
    expect(a?.status).toBe('refused');
    // The operator is told why it cannot apply. The true reason: the kick already reclaimed the step
    // (its step.reclaimed is in the history), and it waits for its next claim.
    expect(blockers.join('; '), 'the refusal names the wrong reason').not.toMatch(/not known to be gone/);
  });

  it('an approval racing a kick: exactly one of them takes the step back, and it runs once more', async () => {
    const { key, runId, approvalId } = await orphanedStep2();
    const [approved] = await Promise.all([
      t.engine.approvals.approve(approvalId, 'r43-ben').then(
        (v) => v.status,
        (e: { code?: string }) => e.code,
      ),
      t.engine.kick(runId).catch((e: { code?: string }) => e.code),
    ]);
    expect(['applied', 'repair_conflict', 'repair_refused']).toContain(approved);
    expect(
      await t.db.prisma.flowEvent.count({ where: { run_id: runId, type: 'step.reclaimed' } }),
      'reclaimed exactly once',
    ).toBe(1);
    const d = await settle(runId);
    expect(d.run.status).toBe('Completed');
    expect(d.actions.find((x) => x.sequence === 2)).toMatchObject({ status: 'Completed', attempts: 2 });
    const rows = await audited(approvalId);
    await checkInvariants(
      t,
      runId,
      key,
      rows.filter((x) => x.status === 'applied').map((x) => x.id),
    );
  });
});
