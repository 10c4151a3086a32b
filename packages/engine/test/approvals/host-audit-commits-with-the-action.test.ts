import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Prisma } from '../../src/generated/prisma/client.ts';
import type { RepairCommand } from '../../src/index.ts';
import { openTestEngine } from '../support/open-test-engine.ts';
import { testDbKind } from '../support/test-database.ts';
import { actions, flows, waiter } from '../repairs/support/repair-fixtures.ts';
import { waitingRun as parkedOnSignal } from '../repairs/support/waiting-run.ts';

type T = Awaited<ReturnType<typeof openTestEngine>>;

/**
 * ADR 0107: a host's audit row for a draft, a rejection or a run it starts is written by the `audit`
 * callback in the engine's own transaction, so the action and its trail row commit together. A
 * callback that fails leaves neither: no draft, no decision, no run.
 */
describe(`a host's audit row commits with the action it describes (${testDbKind()})`, () => {
  let t: T;
  beforeAll(async () => {
    t = await openTestEngine({ flows, actions });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  const waitingRun = () => parkedOnSignal(t);
  const terminate = (runId: string, key: string, actor = 'ana') =>
    ({
      kind: 'run.terminate',
      target: { runId },
      expected: { runStatus: 'Waiting' },
      actor,
      reason: 'charged twice',
      idempotencyKey: key,
    }) as RepairCommand;
  /** The host's row: what the control plane writes (audit_events), in the transaction it is given. */
  const trailRow = (action: string, targetId: string) => (tx: Prisma.TransactionClient) =>
    tx.auditEvent.create({
      data: { at: new Date(), actor: 'ana', action, target_id: targetId, outcome: 'ok', details: {} },
    });
  const refusedByTheHost = () => Promise.reject(new Error('the audit trail refused the row'));
  const trail = (targetId: string) => t.db.prisma.auditEvent.findMany({ where: { target_id: targetId } });

  it('a run started with a failing audit does not exist; with a working one its row is there', async () => {
    const key = `audited-${randomUUID()}`;
    await expect(t.engine.startFlow(waiter, null, { businessKey: key, audit: refusedByTheHost })).rejects.toThrow(
      'the audit trail refused the row',
    );
    expect(await t.db.prisma.flowRun.count({ where: { business_key: key } })).toBe(0);

    let seen = '';
    const { runId } = await t.engine.startFlow(waiter, null, {
      businessKey: key,
      audit: async (tx, started) => {
        seen = started.runId;
        // The run is already there, in the same transaction as the row.
        expect(await tx.flowRun.count({ where: { id: started.runId } })).toBe(1);
        await trailRow('run_started', started.runId)(tx);
      },
    });
    expect(seen).toBe(runId);
    expect((await trail(runId)).map((r) => r.action)).toEqual(['run_started']);
    // It runs like any other start.
    await t.drive(runId, { skipTime: false, until: (d) => d.run.waitingFor?.startsWith('signal') ?? false });
  });

  it('a gated draft with a failing audit is not stored, and its key drafts once the audit works', async () => {
    const runId = await waitingRun();
    const key = randomUUID();
    await expect(t.engine.approvals.submit(terminate(runId, key), { audit: refusedByTheHost })).rejects.toThrow(
      'the audit trail refused the row',
    );
    expect(await t.db.prisma.repairApproval.count({ where: { idempotency_key: key } })).toBe(0);

    const drafted = await t.engine.approvals.submit(terminate(runId, key), {
      audit: (tx, approval) => trailRow('repair_drafted', approval.id)(tx).then(() => undefined),
    });
    if (drafted.status !== 'awaiting_approval') throw new Error(`not gated: ${drafted.status}`);
    expect((await trail(drafted.approvalId)).map((r) => r.action)).toEqual(['repair_drafted']);
    // A replay of the key is not a new draft: no second row.
    const again = await t.engine.approvals.submit(terminate(runId, key), { audit: refusedByTheHost });
    expect(again).toMatchObject({ status: 'awaiting_approval', replayed: true });
    expect(await trail(drafted.approvalId)).toHaveLength(1);
  });

  it('five drafts of one key at once: one draft, one trail row, every caller told the same approval', async () => {
    const runId = await waitingRun();
    const key = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        t.engine.approvals.submit(terminate(runId, key), {
          audit: (tx, approval) => trailRow('repair_drafted', approval.id)(tx).then(() => undefined),
        }),
      ),
    );
    const ids = new Set(answers.map((a) => (a.status === 'awaiting_approval' ? a.approvalId : a.status)));
    expect(ids.size).toBe(1);
    const [approvalId] = [...ids];
    expect(await t.db.prisma.repairApproval.count({ where: { idempotency_key: key } })).toBe(1);
    expect(await trail(approvalId ?? '')).toHaveLength(1);
  });

  it('a bulk draft with a failing audit is not stored', async () => {
    const runIds = [await waitingRun(), await waitingRun()];
    const key = randomUUID();
    const bulk = {
      kind: 'run.terminate',
      items: runIds.map((runId) => ({ target: { runId }, expected: { runStatus: 'Waiting' } })),
      actor: 'ana',
      reason: 'charged twice',
      idempotencyKey: key,
    };
    await expect(t.engine.approvals.submitBulk(bulk, { audit: refusedByTheHost })).rejects.toThrow(
      'the audit trail refused the row',
    );
    expect(await t.db.prisma.repairApproval.count({ where: { idempotency_key: key } })).toBe(0);
    const drafted = await t.engine.approvals.submitBulk(bulk, {
      audit: (tx, approval) => trailRow('repair_drafted', approval.id)(tx).then(() => undefined),
    });
    if (!('status' in drafted) || drafted.status !== 'awaiting_approval') throw new Error('the bulk was not gated');
    expect(await trail(drafted.approvalId)).toHaveLength(1);
  });

  it('a rejection with a failing audit leaves the approval pending; with a working one it is rejected with its row', async () => {
    const runId = await waitingRun();
    const drafted = await t.engine.approvals.submit(terminate(runId, randomUUID()));
    if (drafted.status !== 'awaiting_approval') throw new Error(`not gated: ${drafted.status}`);
    await expect(
      t.engine.approvals.reject(drafted.approvalId, 'ben', 'not a duplicate', { audit: refusedByTheHost }),
    ).rejects.toThrow('the audit trail refused the row');
    expect((await t.engine.approvals.get(drafted.approvalId))?.status).toBe('pending');

    const rejected = await t.engine.approvals.reject(drafted.approvalId, 'ben', 'not a duplicate', {
      audit: async (tx, approval) => {
        expect(approval.status).toBe('rejected');
        await trailRow('repair_rejected', approval.id)(tx);
      },
    });
    expect(rejected.status).toBe('rejected');
    expect((await trail(drafted.approvalId)).map((r) => r.action)).toEqual(['repair_rejected']);
    expect((await t.engine.getRun(runId))?.run.status).toBe('Waiting');
  });
});
