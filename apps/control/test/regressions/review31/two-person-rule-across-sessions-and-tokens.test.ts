import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import {
  apiClient,
  createTestOperator,
  rawCall,
  signInCookie,
  startWaitingRun,
  testDatabaseUrl,
} from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

type Data<T = Record<string, unknown>> = { result: { data: T } };
type ErrorBody = { error: { message: string; data: { httpStatus: number } } };

/**
 * ADR 0020/0021: the drafter may not decide its own draft, whatever credential it uses (a session, its
 * own token, a token an admin made for it under a differently cased name); and an approval made with
 * a token is audited with that token named, as any repair made with a token is.
 */
describe('the two-person rule across sessions and API tokens', () => {
  let plane: ControlPlane;
  const names = { ana: '', ben: '', admin: '' };
  const cookies = { ana: '', ben: '', admin: '' };
  const tokens = { ana: '', anaByAdmin: '', ben: '' };
  beforeAll(async () => {
    const url = await testDatabaseUrl('r31_two_person');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    for (const [who, role] of [
      ['ana', 'operator'],
      ['ben', 'operator'],
      ['admin', 'admin'],
    ] as const) {
      names[who] = await createTestOperator(plane, role);
      cookies[who] = await signInCookie(plane.url, names[who]);
    }
    tokens.ana = (await apiClient(plane.url, cookies.ana).tokens.create.mutate({ name: 'ana' })).token;
    tokens.ben = (await apiClient(plane.url, cookies.ben).tokens.create.mutate({ name: 'ben-ci' })).token;
    tokens.anaByAdmin = (
      await apiClient(plane.url, cookies.admin).tokens.create.mutate({
        name: 'for-ana',
        operator: `  ${names.ana.toUpperCase()} `,
      })
    ).token;
  });
  afterAll(async () => {
    await plane.stop();
  });

  const waitingRun = () => startWaitingRun(plane, cookies.admin);
  const as = (who: { cookie?: string; token?: string }) =>
    who.token ? { authorization: `Bearer ${who.token}` } : { cookie: who.cookie ?? '' };
  const call = (path: string, who: { cookie?: string; token?: string }, input: unknown) =>
    rawCall(plane.url, path, { type: 'mutation', input, ...as(who) });
  async function draftBy(who: { cookie?: string; token?: string }) {
    const runId = await waitingRun();
    const a = await call('repairs.applyOne', who, {
      kind: 'run.terminate',
      target: { runId },
      expected: { runStatus: 'Waiting' },
      reason: 'charged twice',
      idempotencyKey: randomUUID(),
    });
    expect(a.status).toBe(200);
    return { runId, id: (a.body as Data<{ approvalId: string }>).result.data.approvalId };
  }

  it('the drafter is refused whichever of its credentials drafts and which decides', async () => {
    const credentials = [{ cookie: cookies.ana }, { token: tokens.ana }, { token: tokens.anaByAdmin }];
    for (const drafter of credentials) {
      const { runId, id } = await draftBy(drafter);
      for (const decider of credentials)
        for (const path of ['approvals.approve', 'approvals.reject']) {
          const a = await call(path, decider, path === 'approvals.reject' ? { id, reason: 'mine' } : { id });
          expect(a.status, `${path} ${JSON.stringify(a.body)}`).toBe(403);
          expect((a.body as ErrorBody).error.message).toContain('a second operator must');
        }
      expect((await plane.engine.getRun(runId))?.run.status).toBe('Waiting');
      expect((await apiClient(plane.url, cookies.admin).approvals.get.query({ id })).status).toBe('pending');
    }
  });

  it('an approval made with a token names that token on the audit row', async () => {
    const { runId, id } = await draftBy({ cookie: cookies.ana });
    const a = await call('approvals.approve', { token: tokens.ben }, { id });
    expect(a.status).toBe(200);
    const rows = await plane.db.prisma.repairCommand.findMany({ where: { target_id: runId } });
    expect(rows.map((r) => [r.actor, r.approved_by])).toEqual([[names.ana, names.ben]]);
    // The approver's token, in its own column beside approved_by (via stays the drafter's channel).
    expect(JSON.stringify(rows.map((r) => r.approved_via))).toContain('ben-ci');
  });
});
