import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EngineError, type RepairCommand } from '../../src/index.ts';
import { openTestEngine } from '../support/open-test-engine.ts';
import { testDbKind } from '../support/test-database.ts';
import { actions, flows } from '../repairs/support/repair-fixtures.ts';
import { snapshotTables, without } from '../repairs/support/snapshot.ts';
import { waitingRun as parkedOnSignal } from '../repairs/support/waiting-run.ts';

type T = Awaited<ReturnType<typeof openTestEngine>>;

/** The error a promise rejects with (fails the test when it resolves). */
async function refusal(p: Promise<unknown>): Promise<EngineError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EngineError);
  return err as EngineError;
}

/**
 * Issue 9 §1 (last bullet) and ADR 0020: a command the approval policy gates waits, written nowhere
 * but its approval row, until a second operator approves it; the approval applies it through the
 * ordinary repair path, still guarded by the state it was drafted against.
 */
describe(`two-person approvals of repair commands (${testDbKind()})`, () => {
  let t: T;
  const expireAfter = 3600;
  beforeAll(async () => {
    t = await openTestEngine({ flows, actions, config: { approvals: { expire_after_seconds: expireAfter } } });
  });
  afterAll(async () => {
    await t.closeAll();
  });
  beforeEach(async () => {
    // Each test starts from the default policy (no row): what a fresh install has.
    await t.db.prisma.repairApprovalPolicy.deleteMany();
  });

  const waitingRun = () => parkedOnSignal(t);

  const terminate = (runId: string, actor = 'ana', key = randomUUID()) =>
    ({
      kind: 'run.terminate',
      target: { runId },
      expected: { runStatus: 'Waiting' },
      actor,
      reason: 'duplicate order, the customer was charged twice',
      idempotencyKey: key,
    }) as RepairCommand;

  const runStatus = async (runId: string) => (await t.engine.getRun(runId))?.run.status;
  const auditRows = (runId: string) => t.db.prisma.repairCommand.findMany({ where: { target_id: runId } });

  it('out of the box the destructive commands and bulks over 10 are gated', async () => {
    expect(await t.engine.approvals.policy()).toEqual({
      gatedCommands: ['instance.force_transition', 'run.complete_step', 'run.resume_from_step', 'run.terminate'],
      bulkThreshold: 10,
      isDefault: true,
      updatedAt: null,
      updatedBy: null,
    });
  });

  it('a gated terminate writes nothing but its approval until it is approved', async () => {
    const runId = await waitingRun();
    const before = await snapshotTables(t.db);
    const r = await t.engine.approvals.submit(terminate(runId));
    expect(r).toMatchObject({ status: 'awaiting_approval', replayed: false });
    if (r.status !== 'awaiting_approval') throw new Error('not gated');
    expect(r.approval).toMatchObject({
      status: 'pending',
      command: 'run.terminate',
      target: { type: 'run', id: runId },
      drafter: 'ana',
      reason: 'duplicate order, the customer was charged twice',
      preview: { expectedHolds: true, applicable: true, effects: { transitions: [{ to: 'Terminated' }] } },
    });
    const after = await snapshotTables(t.db);
    expect(without(after, 'repair_approvals')).toEqual(without(before, 'repair_approvals'));
    expect(await runStatus(runId)).toBe('Waiting');
    expect(await t.engine.approvals.countPending()).toBeGreaterThanOrEqual(1);
  });

  it('the drafter cannot approve or reject their own command: a typed error, nothing changes', async () => {
    const runId = await waitingRun();
    const r = await t.engine.approvals.submit(terminate(runId, 'ana'));
    if (r.status !== 'awaiting_approval') throw new Error('not gated');
    const before = await snapshotTables(t.db);
    const e = await refusal(t.engine.approvals.approve(r.approvalId, 'ana'));
    expect(e.code).toBe('approval_by_drafter');
    expect(e.message).toContain('a second operator must');
    expect((await refusal(t.engine.approvals.reject(r.approvalId, 'ana', 'changed my mind'))).code).toBe(
      'approval_by_drafter',
    );
    expect(await snapshotTables(t.db)).toEqual(before);
  });

  it('a second operator approves: the run is Terminated and the audit row names drafter and approver', async () => {
    const runId = await waitingRun();
    const r = await t.engine.approvals.submit(terminate(runId, 'ana'));
    if (r.status !== 'awaiting_approval') throw new Error('not gated');
    const approved = await t.engine.approvals.approve(r.approvalId, 'ben');
    expect(approved).toMatchObject({ status: 'applied', decidedBy: 'ben' });
    expect(await runStatus(runId)).toBe('Terminated');
    const rows = await auditRows(runId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      actor: 'ana',
      approved_by: 'ben',
      approval_id: r.approvalId,
      status: 'applied',
      command: 'run.terminate',
    });
    expect(approved.result).toMatchObject({ repairId: rows[0]!.id });
    const events = (await t.engine.getRun(runId))?.events.filter((e) => e.type === 'repair.applied') ?? [];
    expect(events).toHaveLength(1);
    // Approving it again decides nothing.
    expect((await refusal(t.engine.approvals.approve(r.approvalId, 'cleo'))).code).toBe('approval_decided');
    expect(await auditRows(runId)).toHaveLength(1);
  });

  it('an approval whose expected state no longer holds ends as conflict with the state now; the run is untouched', async () => {
    const runId = await waitingRun();
    const r = await t.engine.approvals.submit(terminate(runId, 'ana'));
    if (r.status !== 'awaiting_approval') throw new Error('not gated');
    // The run moves on while the draft waits: someone cancels it directly.
    await t.engine.repairs.apply({
      kind: 'run.cancel',
      target: { runId },
      expected: { runStatus: 'Waiting' },
      actor: 'dan',
      reason: 'customer cancelled',
      idempotencyKey: randomUUID(),
    });
    await t.drive(runId, { skipTime: false });
    // drive() left the workers running: their heartbeat could land between the two snapshots below.
    await t.engine.stopWorkers();
    const moved = await runStatus(runId);
    expect(moved).not.toBe('Waiting');
    const before = await snapshotTables(t.db);
    const e = await refusal(t.engine.approvals.approve(r.approvalId, 'ben'));
    expect(e.code).toBe('repair_conflict');
    expect(e.details).toMatchObject({ current: { runStatus: moved }, expected: { runStatus: 'Waiting' } });
    const after = await snapshotTables(t.db);
    // Only the approval's row and the audit row saying "conflict" changed.
    expect(without(without(after, 'repair_approvals'), 'repair_commands')).toEqual(
      without(without(before, 'repair_approvals'), 'repair_commands'),
    );
    expect(await runStatus(runId)).toBe(moved);
    const approval = await t.engine.approvals.get(r.approvalId);
    expect(approval).toMatchObject({ status: 'conflict', decidedBy: 'ben', result: { actual: { runStatus: moved } } });
    expect((await auditRows(runId)).map((row) => [row.command, row.status, row.approved_by])).toEqual(
      expect.arrayContaining([['run.terminate', 'conflict', 'ben']]),
    );
  });

  it('a rejected command is never applied, and keeps who rejected it and why', async () => {
    const runId = await waitingRun();
    const r = await t.engine.approvals.submit(terminate(runId, 'ana'));
    if (r.status !== 'awaiting_approval') throw new Error('not gated');
    expect((await refusal(t.engine.approvals.reject(r.approvalId, 'ben', ' '))).field).toBe('reason');
    const rejected = await t.engine.approvals.reject(r.approvalId, 'ben', 'wrong run: that order is fine');
    expect(rejected).toMatchObject({
      status: 'rejected',
      decidedBy: 'ben',
      decisionReason: 'wrong run: that order is fine',
    });
    expect((await refusal(t.engine.approvals.approve(r.approvalId, 'cleo'))).code).toBe('approval_decided');
    expect(await runStatus(runId)).toBe('Waiting');
    expect(await auditRows(runId)).toEqual([]);
  });

  it('a pending approval expires after approvals.expire_after_seconds and can no longer be approved', async () => {
    const runId = await waitingRun();
    const r = await t.engine.approvals.submit(terminate(runId, 'ana'));
    if (r.status !== 'awaiting_approval') throw new Error('not gated');
    expect(new Date(r.approval.expiresAt).getTime() - new Date(r.approval.createdAt).getTime()).toBe(
      expireAfter * 1000,
    );
    expect(await t.engine.approvals.countPending()).toBeGreaterThanOrEqual(1);
    t.clock.advance(expireAfter * 1000);
    // Every draft of this file so far is at least this old now.
    expect(await t.engine.approvals.countPending()).toBe(0);
    const e = await refusal(t.engine.approvals.approve(r.approvalId, 'ben'));
    expect(e.code).toBe('approval_expired');
    expect(e.message).toContain('Draft the command again');
    expect((await t.engine.approvals.get(r.approvalId))?.status).toBe('expired');
    expect(await runStatus(runId)).toBe('Waiting');
    expect(await auditRows(runId)).toEqual([]);
  });

  it('the same idempotency key is the same draft; a key reused for another command is bad input', async () => {
    const runId = await waitingRun();
    const key = randomUUID();
    const first = await t.engine.approvals.submit(terminate(runId, 'ana', key));
    const second = await t.engine.approvals.submit(terminate(runId, 'ana', key));
    if (first.status !== 'awaiting_approval' || second.status !== 'awaiting_approval') throw new Error('not gated');
    expect(second).toMatchObject({ approvalId: first.approvalId, replayed: true });
    expect(await t.db.prisma.repairApproval.count({ where: { idempotency_key: key } })).toBe(1);
    const other = await waitingRun();
    const e = await refusal(t.engine.approvals.submit(terminate(other, 'ana', key)));
    expect(e).toMatchObject({ code: 'invalid_input', field: 'idempotencyKey' });
    // After approval, the key answers with what became of the draft, not a second effect.
    await t.engine.approvals.approve(first.approvalId, 'ben');
    const third = await t.engine.approvals.submit(terminate(runId, 'ana', key));
    // Review 31: the answer's own status says so too (a script reading it no longer waits for nothing).
    expect(third).toMatchObject({ status: 'applied', replayed: true, approval: { status: 'applied' } });
    expect(await auditRows(runId)).toHaveLength(1);
  });

  it('a draft whose expected state already fails is refused at once: no approval, the run untouched, one audit row saying conflict', async () => {
    const runId = await waitingRun();
    const before = await snapshotTables(t.db);
    const stale = { ...terminate(runId), expected: { runStatus: 'Running' } } as RepairCommand;
    const e = await refusal(t.engine.approvals.submit(stale));
    expect(e.code).toBe('repair_conflict');
    expect(e.details).toMatchObject({ current: { runStatus: 'Waiting' } });
    expect(without(await snapshotTables(t.db), 'repair_commands')).toEqual(without(before, 'repair_commands'));
    const audit = await auditRows(runId);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      command: 'run.terminate',
      status: 'conflict',
      actor: 'ana',
      idempotency_key: stale.idempotencyKey,
      approval_id: null,
      actual: { runStatus: 'Waiting' },
    });
    // The same key again answers the same refusal, with no second row.
    const again = await refusal(t.engine.approvals.submit(stale));
    expect(again.code).toBe('repair_conflict');
    expect(again.details).toMatchObject({ replayed: true });
    expect(await auditRows(runId)).toHaveLength(1);
    expect(await runStatus(runId)).toBe('Waiting');
  });

  it('a command the policy does not gate is applied at once; an admin can turn the gate off (audited in the same transaction)', async () => {
    const runId = await waitingRun();
    const kicked = await t.engine.approvals.submit({ ...terminate(runId), kind: 'run.kick' });
    expect(kicked).toMatchObject({ status: 'applied' });

    const changes: unknown[] = [];
    const policy = await t.engine.approvals.setPolicy(
      { gatedCommands: [], bulkThreshold: null },
      {
        actor: 'root',
        audit: async (tx, change) => {
          changes.push(change);
          expect(await tx.repairApprovalPolicy.count()).toBe(1);
        },
      },
    );
    expect(policy).toMatchObject({ gatedCommands: [], bulkThreshold: null, isDefault: false, updatedBy: 'root' });
    expect(changes).toMatchObject([{ before: { isDefault: true }, after: { gatedCommands: [] }, actor: 'root' }]);
    const other = await waitingRun();
    expect(await t.engine.approvals.submit(terminate(other))).toMatchObject({ status: 'applied' });
    expect(await runStatus(other)).toBe('Terminated');
  });

  it('a bad policy is refused naming the field, and a failing audit hook rolls the change back', async () => {
    expect(
      await refusal(t.engine.approvals.setPolicy({ gatedCommands: ['run.nuke'], bulkThreshold: 3 }, { actor: 'root' })),
    ).toMatchObject({ code: 'invalid_input', field: 'gatedCommands.0' });
    expect(
      await refusal(t.engine.approvals.setPolicy({ gatedCommands: [], bulkThreshold: -1 }, { actor: 'root' })),
    ).toMatchObject({ code: 'invalid_input', field: 'bulkThreshold' });
    await expect(
      t.engine.approvals.setPolicy(
        { gatedCommands: [], bulkThreshold: null },
        {
          actor: 'root',
          audit: () => Promise.reject(new Error('audit table unavailable')),
        },
      ),
    ).rejects.toThrow('audit table unavailable');
    expect(await t.engine.approvals.policy()).toMatchObject({ isDefault: true });
  });

  it('a bulk over the threshold waits as one approval and is applied item by item when approved', async () => {
    await t.engine.approvals.setPolicy({ gatedCommands: [], bulkThreshold: 1 }, { actor: 'root' });
    const [a, b] = [await waitingRun(), await waitingRun()];
    const bulk = {
      kind: 'run.cancel',
      actor: 'ana',
      reason: 'bulk cleanup after the outage',
      idempotencyKey: randomUUID(),
      items: [
        { target: { runId: a }, expected: { runStatus: 'Waiting' } },
        { target: { runId: b }, expected: { runStatus: 'Waiting' } },
      ],
    };
    const r = await t.engine.approvals.submitBulk(bulk);
    if (!('status' in r) || r.status !== 'awaiting_approval') throw new Error('bulk not gated');
    expect(r.approval).toMatchObject({ bulk: true, target: { type: 'bulk', id: '2 targets' }, status: 'pending' });
    expect(r.approval.preview).toHaveLength(2);
    expect(await auditRows(a)).toEqual([]);
    expect((await refusal(t.engine.approvals.approve(r.approvalId, 'ana'))).code).toBe('approval_by_drafter');

    const approved = await t.engine.approvals.approve(r.approvalId, 'ben');
    expect(approved).toMatchObject({ status: 'applied', result: { applied: 2 } });
    for (const runId of [a, b])
      expect((await auditRows(runId)).map((row) => [row.status, row.actor, row.approved_by, row.approval_id])).toEqual([
        ['applied', 'ana', 'ben', r.approvalId],
      ]);
    // A bulk at or under the threshold is applied at once.
    const c = await waitingRun();
    const small = await t.engine.approvals.submitBulk({
      ...bulk,
      idempotencyKey: randomUUID(),
      items: [bulk.items[0]!],
    });
    expect(small).toMatchObject({ applied: 0, items: [{ outcome: 'conflict' }] });
    expect(await runStatus(c)).toBe('Waiting');
  });

  it('a bulk whose approver stopped part-way is finished by resumeInterrupted: each item applied once, the approval settled', async () => {
    await t.engine.approvals.setPolicy({ gatedCommands: [], bulkThreshold: 1 }, { actor: 'root' });
    const runs = [await waitingRun(), await waitingRun(), await waitingRun()];
    const bulk = {
      kind: 'run.cancel',
      actor: 'ana',
      reason: 'bulk cleanup after the outage',
      idempotencyKey: randomUUID(),
      items: runs.map((runId) => ({ target: { runId }, expected: { runStatus: 'Waiting' } })),
    };
    const r = await t.engine.approvals.submitBulk(bulk);
    if (!('status' in r) || r.status !== 'awaiting_approval') throw new Error('bulk not gated');
    // What an approver's process leaves when it dies after claiming the bulk and applying its first
    // item: the approval `applying`, one item's repair committed under the bulk's per-item key.
    await t.db.prisma.repairApproval.update({
      where: { id: r.approvalId },
      data: { status: 'applying', decided_by: 'ben', decided_at: t.clock.now() },
    });
    const [first] = runs as [string];
    await t.engine.repairs.apply({
      kind: 'run.cancel',
      actor: 'ana',
      reason: bulk.reason,
      target: { runId: first },
      expected: { runStatus: 'Waiting' },
      idempotencyKey: `${bulk.idempotencyKey}:${first}`,
    });
    // A claim younger than approvals.resume_applying_after_seconds may still be in progress: left alone.
    expect(await t.engine.approvals.resumeInterrupted()).toBe(0);
    expect(await t.engine.approvals.get(r.approvalId)).toMatchObject({ status: 'applying' });

    t.clock.advance(301_000);
    expect(await t.engine.approvals.resumeInterrupted()).toBe(1);
    expect(await t.engine.approvals.get(r.approvalId)).toMatchObject({
      status: 'applied',
      decidedBy: 'ben',
      result: { applied: 3 },
    });
    for (const runId of runs) {
      const rows = await auditRows(runId);
      expect(rows.map((row) => row.status)).toEqual(['applied']);
    }
    expect(await t.engine.approvals.resumeInterrupted()).toBe(0);
  });

  it('list pages newest first by cursor position and filters by status', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      t.clock.advance(1000);
      const r = await t.engine.approvals.submit(terminate(await waitingRun()));
      if (r.status !== 'awaiting_approval') throw new Error('not gated');
      ids.push(r.approvalId);
    }
    const page1 = await t.engine.approvals.list({ statuses: ['pending'], limit: 2 });
    expect(page1.map((a) => a.id)).toEqual([ids[2], ids[1]]);
    const last = page1[1]!;
    const page2 = await t.engine.approvals.list({
      statuses: ['pending'],
      limit: 1,
      before: { at: new Date(last.createdAt), id: last.id },
    });
    expect(page2.map((a) => a.id)).toEqual([ids[0]]);
    expect(
      (await t.engine.approvals.list({ statuses: ['rejected'], limit: 50 })).every((a) => a.status === 'rejected'),
    ).toBe(true);
  });
});
