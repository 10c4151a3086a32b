import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { parsePrometheus, seriesOf } from './support/parse-prometheus.ts';
import { eventually } from './support/seed-known-set.ts';
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

const token = 'scrape-token-for-approvals-0123456789';

type ErrorBody = {
  error: { message: string; data: { httpStatus: number; field: string | null; repair?: { current: unknown } } };
};
type Data<T = Record<string, unknown>> = { result: { data: T } };

/**
 * ADR 0020 over real HTTP on PostgreSQL: a gated repair answers awaiting_approval and writes nothing
 * to its target; its drafter is refused (403, saying why); a second operator's approval applies it
 * and writes its audit row; the overview and /metrics count what waits; the policy is read by
 * anyone signed in and set only by an admin, each change in the audit trail.
 */
describe('approvals over HTTP: the two-person rule, the queue, the policy (PostgreSQL)', () => {
  let plane: ControlPlane;
  const names = { viewer: '', ana: '', ben: '', admin: '' };
  const cookies = { viewer: '', ana: '', ben: '', admin: '' };
  beforeAll(async () => {
    const url = await testDatabaseUrl('approvals_api');
    plane = await startControlPlane(
      parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent', SAGAFLOW_METRICS_TOKEN: token }),
    );
    for (const [who, role] of [
      ['viewer', 'viewer'],
      ['ana', 'operator'],
      ['ben', 'operator'],
      ['admin', 'admin'],
    ] as const) {
      names[who] = await createTestOperator(plane, role);
      cookies[who] = await signInCookie(plane.url, names[who]);
    }
  });
  afterAll(async () => {
    await plane.stop();
  });

  const waitingRun = () => startWaitingRun(plane, cookies.ana);

  const terminate = (runId: string, key = randomUUID()) => ({
    kind: 'run.terminate',
    target: { runId },
    expected: { runStatus: 'Waiting' },
    reason: 'the customer was charged twice',
    idempotencyKey: key,
  });
  const call = (path: string, cookie: string, input: unknown, type: 'query' | 'mutation' = 'mutation') =>
    rawCall(plane.url, path, { type, input, cookie });
  const auditRows = (runId: string) => plane.db.prisma.repairCommand.findMany({ where: { target_id: runId } });
  const status = async (runId: string) => (await plane.engine.getRun(runId))?.run.status;

  async function draft(runId: string): Promise<string> {
    const answer = await call('repairs.applyOne', cookies.ana, terminate(runId));
    expect(answer.status).toBe(200);
    const data = (answer.body as Data<{ status: string; approvalId: string }>).result.data;
    expect(data.status).toBe('awaiting_approval');
    return data.approvalId;
  }

  it('a gated terminate answers awaiting_approval and leaves the run alone; its drafter is refused with a 403 saying why', async () => {
    const runId = await waitingRun();
    const id = await draft(runId);
    expect(await status(runId)).toBe('Waiting');
    expect(await auditRows(runId)).toEqual([]);

    for (const path of ['approvals.approve', 'approvals.reject']) {
      const mine = await call(path, cookies.ana, path === 'approvals.reject' ? { id, reason: 'withdrawn' } : { id });
      expect(mine.status, path).toBe(403);
      expect((mine.body as ErrorBody).error.message).toContain(`${names.ana} drafted this run.terminate`);
      expect((mine.body as ErrorBody).error.message).toContain('a second operator must');
    }
    const asViewer = await call('approvals.approve', cookies.viewer, { id });
    expect(asViewer.status).toBe(403);
    expect(await status(runId)).toBe('Waiting');
    expect(await auditRows(runId)).toEqual([]);

    const approved = await call('approvals.approve', cookies.ben, { id });
    expect(approved.status).toBe(200);
    expect((approved.body as Data).result.data).toMatchObject({ status: 'applied', decidedBy: names.ben });
    expect(await status(runId)).toBe('Terminated');
    expect((await auditRows(runId)).map((r) => [r.status, r.actor, r.approved_by, r.approval_id])).toEqual([
      ['applied', names.ana, names.ben, id],
    ]);
  });

  it('an approval after the run moved is a 409 with the state now, and the approval ends as conflict', async () => {
    const runId = await waitingRun();
    const id = await draft(runId);
    const cancelled = await call('repairs.applyOne', cookies.ben, {
      kind: 'run.cancel',
      target: { runId },
      expected: { runStatus: 'Waiting' },
      reason: 'customer cancelled',
      idempotencyKey: randomUUID(),
    });
    expect(cancelled.status).toBe(200);
    // The cancel only requests: the run stays Waiting until the plane's workers deliver it. The approval is
    // decided once the run has observably moved on (an approval that beat that replay would find the run
    // still Waiting, as drafted, and rightly apply).
    const moved = await eventually('the cancellation to be delivered (the run leaves Waiting)', async () => {
      const now = await status(runId);
      return now === undefined || now === 'Waiting' ? undefined : now;
    });
    const late = await call('approvals.approve', cookies.ben, { id });
    expect(late.status).toBe(409);
    expect((late.body as ErrorBody).error.data.repair?.current).toMatchObject({ exists: true });
    const got = await call('approvals.get', cookies.viewer, { id }, 'query');
    expect((got.body as Data).result.data).toMatchObject({ status: 'conflict' });
    expect(['Waiting', 'Terminated']).not.toContain(await status(runId));
    expect(moved).not.toBe('Terminated');
  });

  it('a rejection needs a reason and applies nothing; the queue lists what waits, newest first, by cursor', async () => {
    const runs = [await waitingRun(), await waitingRun(), await waitingRun()];
    const ids = [];
    for (const runId of runs) ids.push(await draft(runId));
    const noReason = await call('approvals.reject', cookies.ben, { id: ids[0], reason: '  ' });
    expect(noReason.status).toBe(400);
    expect((noReason.body as ErrorBody).error.data.field).toBe('input.reason');
    const rejected = await call('approvals.reject', cookies.ben, { id: ids[0], reason: 'wrong order' });
    expect((rejected.body as Data).result.data).toMatchObject({ status: 'rejected', decisionReason: 'wrong order' });
    expect(await status(runs[0]!)).toBe('Waiting');

    const viewer = apiClient(plane.url, cookies.viewer);
    const first = await viewer.approvals.list.query({ status: 'pending', limit: 1 });
    expect(first.items.map((a) => a.id)).toEqual([ids[2]]);
    expect(first.nextCursor).not.toBeNull();
    const second = await viewer.approvals.list.query({ status: 'pending', limit: 1, cursor: first.nextCursor! });
    expect(second.items.map((a) => a.id)).toEqual([ids[1]]);
    const all = await viewer.approvals.list.query({ status: 'pending' });
    expect(all.items.map((a) => a.id)).not.toContain(ids[0]);
    const bad = await call('approvals.list', cookies.viewer, { cursor: 'not-a-cursor' }, 'query');
    expect(bad.status).toBe(400);

    // What waits is counted by the overview and by /metrics.
    const overview = await viewer.overview.get.query();
    expect(overview.approvals.pending).toBe(all.items.length);
    const res = await fetch(`${plane.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    const e = parsePrometheus(await res.text());
    expect(e.types.sagaflow_repairs_awaiting_approval).toBe('gauge');
    expect(seriesOf(e, 'sagaflow_repairs_awaiting_approval')).toEqual({ '': all.items.length });
  });

  it('the same idempotency key is the same draft over HTTP', async () => {
    const runId = await waitingRun();
    const key = randomUUID();
    const a = await call('repairs.applyOne', cookies.ana, terminate(runId, key));
    const b = await call('repairs.applyOne', cookies.ana, terminate(runId, key));
    const [da, db] = [a, b].map((x) => (x.body as Data<{ approvalId: string; replayed: boolean }>).result.data);
    expect(db).toMatchObject({ approvalId: da!.approvalId, replayed: true });
    expect(await plane.db.prisma.repairApproval.count({ where: { idempotency_key: key } })).toBe(1);
  });

  it('a bulk over the threshold answers awaiting_approval; approved by a second operator, each item is applied and audited', async () => {
    const runs = [];
    for (let i = 0; i < 11; i++) runs.push(await waitingRun());
    const bulk = {
      kind: 'run.cancel',
      reason: 'clean up after the carrier outage',
      idempotencyKey: randomUUID(),
      items: runs.map((runId) => ({ target: { runId }, expected: { runStatus: 'Waiting' } })),
    };
    const drafted = await call('repairs.applyBulk', cookies.ana, bulk);
    expect(drafted.status).toBe(200);
    const data = (drafted.body as Data<{ status: string; approvalId: string }>).result.data;
    expect(data.status).toBe('awaiting_approval');
    for (const runId of runs) expect(await auditRows(runId)).toEqual([]);
    expect((await call('approvals.approve', cookies.ana, { id: data.approvalId })).status).toBe(403);
    const approved = await call('approvals.approve', cookies.ben, { id: data.approvalId });
    expect((approved.body as Data).result.data).toMatchObject({ status: 'applied', result: { applied: 11 } });
    for (const runId of runs)
      expect((await auditRows(runId)).map((r) => [r.status, r.actor, r.approved_by])).toEqual([
        ['applied', names.ana, names.ben],
      ]);
    const decided = await apiClient(plane.url, cookies.viewer).approvals.list.query({ status: 'decided' });
    expect(decided.items.map((a) => a.id)).toContain(data.approvalId);
    expect(decided.items.every((a) => a.status !== 'pending')).toBe(true);
  });

  it('the policy: a viewer reads it, an operator may not set it, an admin sets it and the audit trail says so', async () => {
    const got = await call('approvalPolicy.get', cookies.viewer, {}, 'query');
    expect((got.body as Data).result.data).toMatchObject({ bulkThreshold: 10, isDefault: true });
    const off = { gatedCommands: [], bulkThreshold: null };
    const asOperator = await call('approvalPolicy.set', cookies.ben, off);
    expect(asOperator.status).toBe(403);
    expect((asOperator.body as ErrorBody).error.message).toContain('needs the admin role');
    const badField = await call('approvalPolicy.set', cookies.admin, { gatedCommands: ['run.nuke'], bulkThreshold: 3 });
    expect(badField.status).toBe(400);
    expect((badField.body as ErrorBody).error.data.field).toBe('input.gatedCommands.0');
    expect(await plane.db.prisma.auditEvent.count({ where: { action: 'approval_policy_changed' } })).toBe(0);

    const set = await call('approvalPolicy.set', cookies.admin, { gatedCommands: ['run.terminate'], bulkThreshold: 2 });
    expect(set.status).toBe(200);
    expect((set.body as Data).result.data).toMatchObject({
      gatedCommands: ['run.terminate'],
      bulkThreshold: 2,
      isDefault: false,
      updatedBy: names.admin,
    });
    const audit = await plane.db.prisma.auditEvent.findMany({ where: { action: 'approval_policy_changed' } });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: names.admin, outcome: 'succeeded' });
    expect(audit[0]!.details).toMatchObject({ gatedAfter: 'run.terminate', bulkThresholdAfter: 2 });

    // Off: a terminate applies at once.
    await call('approvalPolicy.set', cookies.admin, off);
    const runId = await waitingRun();
    const applied = await call('repairs.applyOne', cookies.ana, terminate(runId));
    expect((applied.body as Data).result.data).toMatchObject({ status: 'applied' });
    expect(await status(runId)).toBe('Terminated');
  });
});
