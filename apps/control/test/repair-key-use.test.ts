import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import {
  apiClient,
  createTestOperator,
  rawCall,
  signInCookie,
  startWaitingRun,
  testDatabaseUrl,
} from './support/test-plane.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

/**
 * repairs.keyUse (ADR 0120 addendum): what became of an idempotency key, asked by the console before it
 * offers a kept draft back. Read-only; an operator's (a viewer is refused, no session is 401).
 */
describe('repairs.keyUse: who used a key, when, and how it ended (PostgreSQL)', () => {
  let plane: ControlPlane;
  const names = { viewer: '', operator: '', second: '', admin: '' };
  const cookies = { viewer: '', operator: '', second: '', admin: '' };
  beforeAll(async () => {
    const url = await testDatabaseUrl('repair_key_use');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    for (const who of ['viewer', 'operator', 'second', 'admin'] as const) {
      names[who] = await createTestOperator(plane, who === 'second' ? 'operator' : who);
      cookies[who] = await signInCookie(plane.url, names[who]);
    }
    await apiClient(plane.url, cookies.admin).approvalPolicy.set.mutate({ gatedCommands: [], bulkThreshold: null });
  });
  afterAll(async () => {
    await plane.stop();
  });

  const as = (who: keyof typeof cookies) => apiClient(plane.url, cookies[who]);
  const cancel = (runId: string, idempotencyKey: string) => ({
    kind: 'run.cancel',
    target: { runId },
    expected: { runStatus: 'Waiting' },
    reason: 'customer cancelled by phone',
    idempotencyKey,
  });

  it('no session is 401, a viewer is 403, and it writes nothing', async () => {
    const input = { idempotencyKey: randomUUID() };
    expect((await rawCall(plane.url, 'repairs.keyUse', { type: 'query', input })).status).toBe(401);
    const asViewer = await rawCall(plane.url, 'repairs.keyUse', { type: 'query', input, cookie: cookies.viewer });
    expect(asViewer.status).toBe(403);
    const before = await plane.db.prisma.auditEvent.count();
    expect(await as('operator').repairs.keyUse.query(input)).toEqual({ decisions: [], draft: null });
    expect(await plane.db.prisma.auditEvent.count()).toBe(before);
  });

  it('a key applied by one operator is named, with its time and audit row, to another operator asking', async () => {
    const runId = await startWaitingRun(plane, cookies.operator);
    const key = randomUUID();
    expect(await as('second').repairs.keyUse.query({ idempotencyKey: key })).toEqual({ decisions: [], draft: null });
    const applied = await as('operator').repairs.applyOne.mutate(cancel(runId, key));
    expect(applied).toMatchObject({ status: 'applied' });
    const row = await plane.db.prisma.repairCommand.findUniqueOrThrow({ where: { idempotency_key: key } });

    const use = await as('second').repairs.keyUse.query({ idempotencyKey: key });
    expect(use.draft).toBeNull();
    expect(use.decisions).toEqual([
      {
        repairId: row.id,
        at: row.at.toISOString(),
        actor: names.operator,
        command: 'run.cancel',
        status: 'applied',
        targetType: 'run',
        targetId: runId,
        runId,
        approvedBy: null,
      },
    ]);
    // Another key on the same run is still unused: the answer is the key's, not the run's.
    expect(await as('second').repairs.keyUse.query({ idempotencyKey: randomUUID() })).toEqual({
      decisions: [],
      draft: null,
    });
  });

  it("a bulk's items are found under its key and their targets; the bulk key alone names none of them", async () => {
    const runs = [await startWaitingRun(plane, cookies.operator), await startWaitingRun(plane, cookies.operator)];
    const key = randomUUID();
    await as('operator').repairs.applyBulk.mutate({
      kind: 'run.cancel',
      reason: 'bulk cancel',
      idempotencyKey: key,
      items: runs.map((runId) => ({ target: { runId }, expected: { runStatus: 'Waiting' } })),
    });
    const use = await as('second').repairs.keyUse.query({ idempotencyKey: key, items: runs });
    expect(use.decisions.map((d) => [d.targetId, d.status, d.actor]).sort()).toEqual(
      runs.map((r) => [r, 'applied', names.operator]).sort(),
    );
    expect((await as('second').repairs.keyUse.query({ idempotencyKey: key, items: [randomUUID()] })).decisions).toEqual(
      [],
    );
    expect((await as('second').repairs.keyUse.query({ idempotencyKey: key })).decisions).toEqual([]);
  });

  it('a gated draft is named pending, then rejected by whom and why, and a pending one past its deadline is expired', async () => {
    await as('admin').approvalPolicy.set.mutate({ gatedCommands: ['run.cancel'], bulkThreshold: null });
    try {
      const runId = await startWaitingRun(plane, cookies.operator);
      const key = randomUUID();
      const sent = (await as('operator').repairs.applyOne.mutate(cancel(runId, key))) as { approvalId: string };
      expect(await as('second').repairs.keyUse.query({ idempotencyKey: key })).toMatchObject({
        decisions: [],
        draft: { approvalId: sent.approvalId, drafter: names.operator, command: 'run.cancel', status: 'pending' },
      });
      await as('second').approvals.reject.mutate({ id: sent.approvalId, reason: 'not this one' });
      expect((await as('operator').repairs.keyUse.query({ idempotencyKey: key })).draft).toMatchObject({
        status: 'rejected',
        decidedBy: names.second,
        decisionReason: 'not this one',
      });

      const late = randomUUID();
      const waiting = (await as('operator').repairs.applyOne.mutate(
        cancel(await startWaitingRun(plane, cookies.operator), late),
      )) as { approvalId: string };
      // Its deadline passes (set in the past directly: no sweeper has marked it yet).
      await plane.db.prisma.repairApproval.update({
        where: { id: waiting.approvalId },
        data: { expires_at: new Date(Date.now() - 1000) },
      });
      expect((await as('operator').repairs.keyUse.query({ idempotencyKey: late })).draft).toMatchObject({
        approvalId: waiting.approvalId,
        status: 'expired',
      });
    } finally {
      await as('admin').approvalPolicy.set.mutate({ gatedCommands: [], bulkThreshold: null });
    }
  });
});
