import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { checkInvariants, fuzzActions, gates, saga, scripts } from '../review40/support/fuzz-saga.ts';
import { gateEverything, until } from './support/run-rows.ts';

type T = Awaited<ReturnType<typeof openTestEngine>>;

/**
 * Review 43: a bulk approval whose approver is slow, not dead (held on a run's row lock past
 * approvals.resume_applying_after_seconds), while resumeInterrupted applies the same bulk. ADR 0020:
 * "two appliers at once meet on each item's unique key": each item applied once, the approval settled once.
 */
describe('review 43: resumeInterrupted racing the bulk approver it takes for dead (real PostgreSQL)', () => {
  let t!: T;
  beforeAll(async () => {
    // A short resume age: a clock jump past a worker's job lock (60 s) would move the parked runs on by itself.
    t = await openTestEngine({
      flows: [saga],
      actions: fuzzActions,
      config: { worker: { concurrency: 6 }, approvals: { resume_applying_after_seconds: 2 } },
    });
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

  const lockWaiters = async () =>
    Number(
      (
        await t.db.prisma.$queryRaw<{ n: bigint }[]>`
          select count(*) as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`
      )[0]!.n,
    );

  it('each item is applied once, the approval ends applied once, every run is cancelled and undone once', async () => {
    const runs = [await parked(), await parked(), await parked()];
    const bulk = {
      kind: 'run.cancel',
      actor: 'r43-drafter',
      reason: 'review 43 slow bulk',
      idempotencyKey: randomUUID(),
      items: runs.map((r) => ({ target: { runId: r.runId }, expected: { runStatus: 'Running' } })),
    };
    const drafted = await t.engine.approvals.submitBulk(bulk);
    if (!('status' in drafted) || drafted.status !== 'awaiting_approval') throw new Error('bulk not gated');

    // Hold run 2's row so the approver stops there after applying item 1.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let holding!: () => void;
    const held = new Promise<void>((r) => (holding = r));
    const holder = t.db.prisma.$transaction(
      async (tx) => {
        await tx.$queryRaw`select id from "sagaflow"."flow_runs" where id = ${runs[1]!.runId}::uuid for update`;
        holding();
        await released;
      },
      { timeout: 60_000, maxWait: 10_000 },
    );
    await held;
    const base = await lockWaiters();
    const approving = t.engine.approvals.approve(drafted.approvalId, 'r43-approver').then(
      (v) => v,
      (e: unknown) => e,
    );
    await until(
      async () => ({
        first: await t.db.prisma.repairCommand.count({ where: { target_id: runs[0]!.runId, status: 'applied' } }),
        waiting: await lockWaiters(),
      }),
      (x) => x.first === 1 && x.waiting > base,
      'the approver to apply item 1 and wait on run 2',
    );
    // Its claim is now older than approvals.resume_applying_after_seconds: it looks interrupted.
    t.clock.advance(3_000);
    const resuming = t.engine.approvals.resumeInterrupted().then(
      (v) => v,
      (e: unknown) => e,
    );
    await until(lockWaiters, (n) => n > base + 1, 'the resume to wait on run 2 as well');
    release();
    await holder;
    const [approved, resumed] = await Promise.all([approving, resuming]);
    expect(approved, 'the approver').toMatchObject({ status: 'applied' });
    expect(resumed, 'the resume').toBe(1);

    const a = await t.engine.approvals.get(drafted.approvalId);
    expect(a, JSON.stringify({ result: a?.result, resumed }).slice(0, 3000)).toMatchObject({
      status: 'applied',
      decidedBy: 'r43-approver',
      result: { applied: 3 },
    });
    for (const r of runs) {
      const rows = await t.db.prisma.repairCommand.findMany({ where: { target_id: r.runId } });
      expect(
        rows.map((x) => [x.status, x.actor, x.approved_by, x.approval_id]),
        `run ${r.runId}: one audit row`,
      ).toEqual([['applied', 'r43-drafter', 'r43-approver', drafted.approvalId]]);
      expect(
        await t.db.prisma.flowEvent.count({ where: { run_id: r.runId, type: 'run.cancel_requested' } }),
        'cancelled once',
      ).toBe(1);
    }
    for (const r of runs) {
      const g = gates.get(`${r.key}:2`);
      gates.delete(`${r.key}:2`);
      g?.(true);
    }
    for (const r of runs) {
      await until(
        async () => (await t.engine.getRun(r.runId))!.run.status,
        (s) => s === 'Cancelled',
        'each run to end Cancelled',
      );
      const rows = await t.db.prisma.repairCommand.findMany({ where: { target_id: r.runId } });
      await checkInvariants(
        t,
        r.runId,
        r.key,
        rows.map((x) => x.id),
      );
    }
  });
});
