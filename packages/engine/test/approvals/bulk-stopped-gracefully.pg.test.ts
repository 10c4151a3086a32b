import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../src/index.ts';
import { createTestEngine, type TestEngine } from '../../src/testing/create-test-engine.ts';
import { openTestEngine } from '../support/open-test-engine.ts';
import { actions, flows } from '../repairs/support/repair-fixtures.ts';
import { waitingRun as parkedOnSignal } from '../repairs/support/waiting-run.ts';

type T = Awaited<ReturnType<typeof openTestEngine>>;

const until = async <V>(read: () => Promise<V>, ok: (v: V) => boolean, what: string): Promise<V> => {
  for (let i = 0; i < 2400; i++) {
    const v = await read();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
};

/**
 * ADR 0121: an approved bulk is claimed once, with its approver's token and its one bulk id; a
 * graceful stop (`approvals.stopApplying`) ends a bulk in flight after the item in hand, logs how far
 * it got, answers its approver `approval_interrupted`, and marks it so that any engine's resumer
 * finishes it at its next pass (not once its claim is `resume_applying_after_seconds` old), under the
 * same approver, token and bulk id. The stop is placed by progress: the approver waits on a row lock
 * of the second item's run that the test holds.
 */
describe('an approved bulk ended by a graceful stop (real PostgreSQL)', () => {
  let t!: T;
  let other: TestEngine | undefined;
  const warnings: Record<string, unknown>[] = [];
  beforeAll(async () => {
    const logger = pino(
      { level: 'warn' },
      { write: (line: string) => void warnings.push(JSON.parse(line) as Record<string, unknown>) },
    );
    t = await openTestEngine({ flows, actions, logger });
    await t.engine.approvals.setPolicy({ gatedCommands: ['run.cancel'], bulkThreshold: 1 }, { actor: 'root' });
  });
  afterAll(async () => {
    await other?.close();
    await t?.closeAll();
  });

  const lockWaiters = async () =>
    Number(
      (
        await t.db.prisma.$queryRaw<{ n: bigint }[]>`
          select count(*) as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`
      )[0]!.n,
    );

  const draft = async (runs: string[]) => {
    const r = await t.engine.approvals.submitBulk({
      kind: 'run.cancel',
      actor: 'ana',
      reason: 'bulk cleanup after the outage',
      idempotencyKey: randomUUID(),
      items: runs.map((runId) => ({ target: { runId }, expected: { runStatus: 'Waiting' } })),
    });
    if (!('status' in r) || r.status !== 'awaiting_approval') throw new Error('bulk not gated');
    return r.approvalId;
  };

  it('stops after the item in hand, says how far it got, and another engine finishes it at once with the same token and bulk id', async () => {
    const runs = [await parkedOnSignal(t), await parkedOnSignal(t), await parkedOnSignal(t)];
    const approvalId = await draft(runs);
    const later = await draft([await parkedOnSignal(t)]);

    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let holding!: () => void;
    const held = new Promise<void>((r) => (holding = r));
    const holder = t.db.prisma.$transaction(
      async (tx) => {
        await tx.$queryRaw`select id from "sagaflow"."flow_runs" where id = ${runs[1]!}::uuid for update`;
        holding();
        await released;
      },
      { timeout: 60_000, maxWait: 10_000 },
    );
    await held;
    const base = await lockWaiters();
    const approving = t.engine.approvals.approve(approvalId, 'ben', { via: 'token ben-approves (…a1b2)' }).then(
      (v) => v,
      (e: unknown) => e,
    );
    await until(
      async () => ({
        first: await t.db.prisma.repairCommand.count({ where: { target_id: runs[0]!, status: 'applied' } }),
        waiting: await lockWaiters(),
      }),
      (x) => x.first === 1 && x.waiting > base,
      'the approver to apply item 1 and wait on run 2',
    );
    // No grace: the bulk is told at once; item 2 (in hand) still ends, item 3 is not started.
    const stopped = t.engine.approvals.stopApplying({ graceMs: 0, waitMs: 30_000 });
    release();
    await holder;
    await stopped;

    const err = await approving;
    expect(err).toBeInstanceOf(EngineError);
    const e = err as EngineError;
    expect({ code: e.code, retryable: e.retryable, details: e.details }).toMatchObject({
      code: 'approval_interrupted',
      retryable: false,
      details: { approvalId, status: 'applying', done: 2, applied: 2, of: 3 },
    });
    const bulkId = e.details?.bulkId as string;
    const left = await t.db.prisma.repairApproval.findUniqueOrThrow({ where: { id: approvalId } });
    expect(left).toMatchObject({ status: 'applying', decided_by: 'ben', bulk_id: bulkId });
    expect(left.decided_via).toBe('token ben-approves (…a1b2)');
    expect(left.left_at).not.toBeNull();
    expect(await t.db.prisma.repairCommand.count({ where: { target_id: runs[2]! } })).toBe(0);
    expect(warnings.filter((w) => w.approval === approvalId)).toMatchObject([
      { level: 40, bulkId, done: 2, applied: 2, of: 3 },
    ]);

    // Once stopping, a bulk is not claimed: it stays pending, for another control plane.
    const refused = await t.engine.approvals.approve(later, 'ben').then(
      () => null,
      (x: unknown) => x as EngineError,
    );
    expect(refused).toMatchObject({ code: 'approval_interrupted', retryable: true, details: { status: 'pending' } });
    expect((await t.db.prisma.repairApproval.findUniqueOrThrow({ where: { id: later } })).status).toBe('pending');

    // Another engine (default resume age, 300 s) takes the left bulk at its next pass.
    other = await createTestEngine({ flows, actions, db: t.db });
    expect(await other.engine.approvals.resumeInterrupted()).toBe(1);
    const done = await t.db.prisma.repairApproval.findUniqueOrThrow({ where: { id: approvalId } });
    expect(done).toMatchObject({ status: 'applied', decided_by: 'ben', bulk_id: bulkId });
    expect((done.result as { bulkId?: string; applied?: number } | null) ?? {}).toMatchObject({ bulkId, applied: 3 });
    for (const runId of runs) {
      const rows = await t.db.prisma.repairCommand.findMany({ where: { target_id: runId } });
      expect(rows.map((r) => [r.status, r.approved_by, r.approved_via, r.bulk_id])).toEqual([
        ['applied', 'ben', 'token ben-approves (…a1b2)', bulkId],
      ]);
    }
    expect(await other.engine.approvals.resumeInterrupted()).toBe(0);
  });
});
