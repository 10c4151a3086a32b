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
import { fulfilmentProcess } from '../src/demo/fulfilment-process.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

/** What a refused tRPC call's JSON body says (a single, unbatched call). */
type ErrorBody = {
  error: {
    message: string;
    data: {
      httpStatus: number;
      field: string | null;
      repair?: { repairId: string | null; current: unknown; expected: unknown; blockers: string[] };
    };
  };
};

describe('repairs over HTTP: roles, the session as actor, conflicts and idempotency (PostgreSQL)', () => {
  let plane: ControlPlane;
  const names = { viewer: '', operator: '', admin: '' };
  const cookies = { viewer: '', operator: '', admin: '' };
  beforeAll(async () => {
    const url = await testDatabaseUrl('repairs_api');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    for (const role of ['viewer', 'operator', 'admin'] as const) {
      names[role] = await createTestOperator(plane, role);
      cookies[role] = await signInCookie(plane.url, names[role]);
    }
  });
  afterAll(async () => {
    await plane.stop();
  });

  /**
   * A demo.reservation run parked in Waiting on its `confirm` signal (its window is 30 s of the
   * control plane's clock; the repairs below are made as soon as it waits).
   */
  const waitingRun = () => startWaitingRun(plane, cookies.operator);

  const cancel = (runId: string, key = randomUUID(), runStatus = 'Waiting') => ({
    kind: 'run.cancel',
    target: { runId },
    expected: { runStatus },
    reason: 'customer asked to cancel',
    idempotencyKey: key,
  });

  const auditRows = (runId: string) =>
    plane.db.prisma.repairCommand.findMany({ where: { target_id: runId }, orderBy: { at: 'asc' } });
  const repairEvents = async (runId: string) =>
    ((await plane.engine.getRun(runId))?.events ?? []).filter((e) => e.type === 'repair.applied');

  it('the catalogue is open to viewers and marks force_transition admin only', async () => {
    const catalogue = await apiClient(plane.url, cookies.viewer).repairs.catalogue.query();
    expect(catalogue['instance.force_transition']).toMatchObject({ adminOnly: true, destructive: true });
    expect(catalogue['run.cancel']).toMatchObject({ adminOnly: false });
  });

  it('no session is 401 and a viewer is 403 on preview and apply; nothing is written', async () => {
    const runId = await waitingRun();
    const cmd = cancel(runId);
    for (const [path, type] of [
      ['repairs.preview', 'query'],
      ['repairs.applyOne', 'mutation'],
      ['repairs.applyBulk', 'mutation'],
    ] as const) {
      expect((await rawCall(plane.url, path, { type, input: cmd })).status, path).toBe(401);
      const asViewer = await rawCall(plane.url, path, { type, input: cmd, cookie: cookies.viewer });
      expect(asViewer.status, path).toBe(403);
      expect((asViewer.body as ErrorBody).error.message).toContain('needs the operator role');
    }
    expect(await auditRows(runId)).toEqual([]);
    expect((await plane.engine.getRun(runId))?.run.status).toBe('Waiting');
  });

  it('an operator cancels a real run: the audit row names the operator from the session as actor', async () => {
    const runId = await waitingRun();
    const api = apiClient(plane.url, cookies.operator);
    const preview = await api.repairs.preview.query(cancel(runId));
    expect(preview).toMatchObject({ expectedHolds: true, applicable: true });
    expect(await auditRows(runId)).toEqual([]);

    const result = await api.repairs.applyOne.mutate(cancel(runId));
    expect(result).toMatchObject({ status: 'applied', replayed: false, target: { type: 'run', id: runId } });
    if (result.status === 'awaiting_approval') throw new Error('a cancel is not gated by the default policy');
    const rows = await auditRows(runId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      id: result.id,
      actor: names.operator,
      command: 'run.cancel',
      status: 'applied',
      reason: 'customer asked to cancel',
    });
    expect((await repairEvents(runId)).map((e) => (e.data as { actor: string }).actor)).toEqual([names.operator]);
  });

  it('the client cannot name the actor: 400 on input.actor, nothing written', async () => {
    const runId = await waitingRun();
    const answer = await rawCall(plane.url, 'repairs.applyOne', {
      type: 'mutation',
      input: { ...cancel(runId), actor: 'someone-else' },
      cookie: cookies.operator,
    });
    expect(answer.status).toBe(400);
    expect((answer.body as ErrorBody).error.data.field).toBe('input.actor');
    expect(await auditRows(runId)).toEqual([]);
    expect((await plane.engine.getRun(runId))?.run.status).toBe('Waiting');
  });

  it('bad input is a 400 naming the field (checked by the engine), nothing written', async () => {
    const runId = await waitingRun();
    const answer = await rawCall(plane.url, 'repairs.applyOne', {
      type: 'mutation',
      input: { ...cancel(runId), expected: { runStatus: 'Sleeping' } },
      cookie: cookies.operator,
    });
    expect(answer.status).toBe(400);
    expect((answer.body as ErrorBody).error.data.field).toBe('input.expected.runStatus');
    const noReason = await rawCall(plane.url, 'repairs.applyOne', {
      type: 'mutation',
      input: { ...cancel(runId), reason: undefined },
      cookie: cookies.operator,
    });
    expect(noReason.status).toBe(400);
    expect((noReason.body as ErrorBody).error.data.field).toBe('input.reason');
    expect(await auditRows(runId)).toEqual([]);
  });

  it('a stale expected state is a 409 carrying the current state, and changes nothing', async () => {
    const runId = await waitingRun();
    const before = await plane.engine.getRun(runId);
    const answer = await rawCall(plane.url, 'repairs.applyOne', {
      type: 'mutation',
      input: cancel(runId, randomUUID(), 'Running'),
      cookie: cookies.operator,
    });
    expect(answer.status).toBe(409);
    const body = answer.body as ErrorBody;
    expect(body.error.data.repair).toMatchObject({
      current: { exists: true, runStatus: 'Waiting' },
      expected: { runStatus: 'Running' },
    });
    expect(body.error.message).toContain('Preview it again');
    expect(body.error.data.field, 'the 409 names what differs').toBe('input.expected.runStatus');
    expect(JSON.stringify(body)).not.toMatch(/stack|\.ts:|select |sagaflow\./i);
    const after = await plane.engine.getRun(runId);
    expect(after?.run.status).toBe('Waiting');
    expect(after?.events).toEqual(before?.events);
    // The refusal is audited (status conflict) and is all that was written.
    expect((await auditRows(runId)).map((r) => [r.status, r.actor])).toEqual([['conflict', names.operator]]);
  });

  it('a compensation reclaim is refused naming the field: a bad target is 400, a compensation not there is 409; nothing changes', async () => {
    const runId = await waitingRun();
    const before = await plane.engine.getRun(runId);
    const reclaim = (compensation: object) => ({
      kind: 'run.reclaim_step',
      target: { runId, compensation },
      expected: { runStatus: 'Waiting', stepStatus: 'Running', stepAttempts: 1 },
      reason: 'its worker died mid-refund',
      idempotencyKey: randomUUID(),
    });
    const bad = await rawCall(plane.url, 'repairs.applyOne', {
      type: 'mutation',
      input: reclaim({ rollbackLevel: 0, ordinal: 0 }),
      cookie: cookies.operator,
    });
    expect(bad.status).toBe(400);
    expect((bad.body as ErrorBody).error.data.field).toBe('input.target.compensation.rollbackLevel');
    expect(await auditRows(`${runId}#rollback-0.0`)).toEqual([]);
    const missing = await rawCall(plane.url, 'repairs.applyOne', {
      type: 'mutation',
      input: reclaim({ rollbackLevel: 1, ordinal: 0 }),
      cookie: cookies.operator,
    });
    expect(missing.status).toBe(409);
    const body = missing.body as ErrorBody;
    expect(body.error.data.field).toBe('input.target');
    expect(body.error.data.repair).toMatchObject({ current: { runStatus: 'Waiting', step: null } });
    expect((await plane.engine.getRun(runId))?.events).toEqual(before?.events);
    expect((await auditRows(`${runId}#rollback-1.0`)).map((r) => r.status)).toEqual(['conflict']);
  });

  it('the same idempotency key twice has one effect: the second call returns the first result', async () => {
    const runId = await waitingRun();
    const api = apiClient(plane.url, cookies.operator);
    const key = randomUUID();
    const first = await api.repairs.applyOne.mutate(cancel(runId, key));
    const second = await api.repairs.applyOne.mutate(cancel(runId, key));
    if (first.status === 'awaiting_approval') throw new Error('a cancel is not gated by the default policy');
    expect(first.replayed).toBe(false);
    expect(second).toMatchObject({ id: first.id, status: 'applied', replayed: true });
    expect(await auditRows(runId)).toHaveLength(1);
    expect(await repairEvents(runId)).toHaveLength(1);
  });

  it('a bulk cancel applies item by item with the session operator as each audit row`s actor', async () => {
    const [a, b] = [await waitingRun(), await waitingRun()];
    const result = await apiClient(plane.url, cookies.operator).repairs.applyBulk.mutate({
      kind: 'run.cancel',
      reason: 'bulk cleanup',
      idempotencyKey: randomUUID(),
      items: [
        { target: { runId: a }, expected: { runStatus: 'Waiting' } },
        { target: { runId: b }, expected: { runStatus: 'Running' } },
      ],
    });
    if ('status' in result) throw new Error('a bulk of two cancels is not gated by the default policy');
    expect(result.items.map((i) => i.outcome)).toEqual(['applied', 'conflict']);
    expect((await auditRows(a)).map((r) => [r.status, r.actor])).toEqual([['applied', names.operator]]);
    expect((await auditRows(b)).map((r) => [r.status, r.actor])).toEqual([['conflict', names.operator]]);
    expect((await plane.engine.getRun(b))?.run.status).toBe('Waiting');
  });

  it('force_transition is 403 for an operator (preview too); an admin drafts it and a second admin approves it', async () => {
    const orderId = randomUUID();
    const delivered = await plane.engine.processes.deliver(fulfilmentProcess, {
      id: `note-${randomUUID()}`,
      type: 'CustomerNoteAdded',
      payload: { orderId, note: 'leave it at the door' },
    });
    const instanceId = delivered.instanceId;
    if (instanceId === null) throw new Error('the note reached no instance');
    const found = await plane.engine.processes.find(instanceId);
    if (!found) throw new Error('no instance');
    const cmd = {
      kind: 'instance.force_transition',
      target: { instanceId },
      expected: { state: found.currentState, version: found.version },
      to: 'ManualReview',
      reason: 'carrier lost the parcel',
      idempotencyKey: randomUUID(),
    };
    for (const [path, type] of [
      ['repairs.preview', 'query'],
      ['repairs.applyOne', 'mutation'],
      ['repairs.applyBulk', 'mutation'],
    ] as const) {
      const input =
        path === 'repairs.applyBulk'
          ? { ...cmd, target: undefined, expected: undefined, items: [{ target: cmd.target, expected: cmd.expected }] }
          : cmd;
      const asOperator = await rawCall(plane.url, path, { type, input, cookie: cookies.operator });
      expect(asOperator.status, path).toBe(403);
      expect((asOperator.body as ErrorBody).error.message).toContain('instance.force_transition needs the admin role');
    }
    expect((await plane.engine.processes.find(instanceId))?.currentState).toBe(found.currentState);
    expect(await plane.db.prisma.repairCommand.count({ where: { target_id: instanceId } })).toBe(0);

    const asAdmin = await rawCall(plane.url, 'repairs.applyOne', {
      type: 'mutation',
      input: cmd,
      cookie: cookies.admin,
    });
    expect(asAdmin.status).toBe(200);
    // Destructive: the default approval policy holds it for a second operator (ADR 0020).
    const awaiting = (asAdmin.body as { result: { data: { status: string; approvalId: string } } }).result.data;
    expect(awaiting.status).toBe('awaiting_approval');
    expect((await plane.engine.processes.find(instanceId))?.currentState).toBe(found.currentState);
    // Only an admin may approve what only an admin may draft.
    const byOperator = await rawCall(plane.url, 'approvals.approve', {
      type: 'mutation',
      input: { id: awaiting.approvalId },
      cookie: cookies.operator,
    });
    expect(byOperator.status).toBe(403);
    expect((byOperator.body as ErrorBody).error.message).toContain('needs the admin role to approve');
    const secondAdmin = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
    const approved = await rawCall(plane.url, 'approvals.approve', {
      type: 'mutation',
      input: { id: awaiting.approvalId },
      cookie: secondAdmin,
    });
    expect(approved.status).toBe(200);
    expect((await plane.engine.processes.find(instanceId))?.currentState).toBe('ManualReview');
    const rows = await plane.db.prisma.repairCommand.findMany({ where: { target_id: instanceId } });
    expect(rows.map((r) => [r.status, r.actor])).toEqual([['applied', names.admin]]);
  });
});
