import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { createTestOperator, rawCall, signInCookie, startWaitingRun, testDatabaseUrl } from './support/test-plane.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

type Data<T = Record<string, unknown>> = { result: { data: T } };

/**
 * ADR 0107: a run started, a repair drafted for approval and a draft rejected through the API each
 * write their audit_events row in the same transaction as the action. A trail row the database
 * refuses (here a trigger, standing in for a full disk or a broken constraint) leaves no action
 * behind: never a run, a draft or a decision nobody can trace.
 */
describe('an operator action and its audit row commit together', () => {
  let plane: ControlPlane;
  const cookies = { ana: '', ben: '' };
  beforeAll(async () => {
    const url = await testDatabaseUrl('audit_commits_with_action');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    for (const who of ['ana', 'ben'] as const)
      cookies[who] = await signInCookie(plane.url, await createTestOperator(plane, 'operator'));
    // The trail refuses any row whose reason or business key says so.
    await plane.db.prisma.$executeRawUnsafe(`
      create function sagaflow.test_refuse_trail_row() returns trigger language plpgsql as $$
      begin
        if coalesce(new.reason, '') like '%refuse-trail%' or coalesce(new.details->>'businessKey', '') like 'refuse-trail%' then
          raise exception 'the audit trail refused the row';
        end if;
        return new;
      end $$`);
    await plane.db.prisma.$executeRawUnsafe(`
      create trigger test_refuse_trail_row before insert on sagaflow.audit_events
        for each row execute function sagaflow.test_refuse_trail_row()`);
  });
  afterAll(async () => {
    await plane.stop();
  });

  const call = (path: string, cookie: string, input: unknown) =>
    rawCall(plane.url, path, { type: 'mutation', input, cookie });
  const rows = (action: string, targetId: string) =>
    plane.db.prisma.auditEvent.count({ where: { action, target_id: targetId } });

  it('a run whose trail row is refused was not started; one whose row is written was, once', async () => {
    const businessKey = `refuse-trail-${randomUUID()}`;
    const refused = await call('runs.start', cookies.ana, {
      flowName: 'demo.reservation',
      input: { orderId: randomUUID() },
      businessKey,
    });
    expect(refused.status, JSON.stringify(refused.body)).toBeGreaterThanOrEqual(500);
    expect(await plane.db.prisma.flowRun.count({ where: { business_key: businessKey } })).toBe(0);

    const kept = `kept-${randomUUID()}`;
    const started = await call('runs.start', cookies.ana, {
      flowName: 'demo.reservation',
      input: { orderId: randomUUID() },
      businessKey: kept,
    });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const { runId } = (started.body as Data<{ runId: string }>).result.data;
    expect(await rows('run_started', runId)).toBe(1);
  });

  it('a draft whose trail row is refused is not waiting for anyone; a rejection likewise leaves it pending', async () => {
    const runId = await startWaitingRun(plane, cookies.ana);
    const command = (reason: string, key: string) => ({
      kind: 'run.terminate',
      target: { runId },
      expected: { runStatus: 'Waiting' },
      reason,
      idempotencyKey: key,
    });
    const refusedKey = randomUUID();
    const refused = await call('repairs.applyOne', cookies.ana, command('refuse-trail: charged twice', refusedKey));
    expect(refused.status, JSON.stringify(refused.body)).toBeGreaterThanOrEqual(500);
    expect(await plane.db.prisma.repairApproval.count({ where: { idempotency_key: refusedKey } })).toBe(0);

    const drafted = await call('repairs.applyOne', cookies.ana, command('charged twice', randomUUID()));
    expect(drafted.status, JSON.stringify(drafted.body)).toBe(200);
    const { approvalId } = (drafted.body as Data<{ approvalId: string }>).result.data;
    expect(await rows('repair_drafted', approvalId)).toBe(1);

    const notRejected = await call('approvals.reject', cookies.ben, { id: approvalId, reason: 'refuse-trail: mine' });
    expect(notRejected.status, JSON.stringify(notRejected.body)).toBeGreaterThanOrEqual(500);
    expect((await plane.engine.approvals.get(approvalId))?.status).toBe('pending');
    expect(await rows('repair_rejected', approvalId)).toBe(0);

    const rejected = await call('approvals.reject', cookies.ben, { id: approvalId, reason: 'not a duplicate' });
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);
    expect((await plane.engine.approvals.get(approvalId))?.status).toBe('rejected');
    expect(await rows('repair_rejected', approvalId)).toBe(1);
    expect((await plane.engine.getRun(runId))?.run.status).toBe('Waiting');
  });
});
