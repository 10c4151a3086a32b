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

type Data<T = Record<string, unknown>> = { result: { data: T } };
type ErrorBody = { error: { message: string; data: { httpStatus: number } } };
type Who = { cookie?: string; token?: string };

/**
 * ADR 0111: the two-person rule counts the people behind a credential, not the name on it. An admin
 * holds the secret of every token it creates for another operator (ADR 0021), so a token's creator
 * stands behind it: on the approver's side (the approver's token was made by the drafter) and on
 * the drafter's side (the draft was made with a token the approver made), bulk or not, approve or
 * reject. A genuine second person, whoever made its token, still decides.
 */
describe('the two-person rule counts who created an API token', () => {
  let plane: ControlPlane;
  const names = { admin: '', admin2: '', ana: '', ben: '' };
  const cookies = { admin: '', admin2: '', ana: '', ben: '' };
  const tokens = { anaByAdmin: '', benByAdmin: '', anaByAdmin2: '', ben: '' };
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({ DATABASE_URL: await testDatabaseUrl('fix37_creators'), CONTROL_PORT: '0', LOG_LEVEL: 'silent' }),
    );
    for (const [who, role] of [
      ['admin', 'admin'],
      ['admin2', 'admin'],
      ['ana', 'operator'],
      ['ben', 'operator'],
    ] as const) {
      names[who] = await createTestOperator(plane, role);
      cookies[who] = await signInCookie(plane.url, names[who]);
    }
    const mint = async (by: string, operator: string, name: string) =>
      (await apiClient(plane.url, by).tokens.create.mutate({ name, operator })).token;
    tokens.anaByAdmin = await mint(cookies.admin, names.ana, 'ana-by-admin');
    tokens.benByAdmin = await mint(cookies.admin, names.ben, 'ben-by-admin');
    tokens.anaByAdmin2 = await mint(cookies.admin2, names.ana, 'ana-by-admin2');
    tokens.ben = (await apiClient(plane.url, cookies.ben).tokens.create.mutate({ name: 'ben-own' })).token;
  });
  afterAll(async () => {
    await plane.stop();
  });

  const as = (who: Who) => (who.token ? { authorization: `Bearer ${who.token}` } : { cookie: who.cookie ?? '' });
  const call = (path: string, who: Who, input: unknown) =>
    rawCall(plane.url, path, { type: 'mutation', input, ...as(who) });
  const decide = (path: 'approvals.approve' | 'approvals.reject', who: Who, id: string) =>
    call(path, who, path === 'approvals.reject' ? { id, reason: 'not mine to keep' } : { id });

  async function draft(who: Who, bulk = false) {
    const runIds = [await startWaitingRun(plane, cookies.admin)];
    const command = bulk
      ? {
          kind: 'run.terminate',
          reason: 'charged twice',
          idempotencyKey: randomUUID(),
          items: runIds.map((runId) => ({ target: { runId }, expected: { runStatus: 'Waiting' } })),
        }
      : {
          kind: 'run.terminate',
          target: { runId: runIds[0] },
          expected: { runStatus: 'Waiting' },
          reason: 'charged twice',
          idempotencyKey: randomUUID(),
        };
    const a = await call(bulk ? 'repairs.applyBulk' : 'repairs.applyOne', who, command);
    const data = (a.body as Data<{ status: string; approvalId: string }>).result.data;
    expect(data.status, JSON.stringify(a.body)).toBe('awaiting_approval');
    return { runIds, id: data.approvalId };
  }

  async function expectRefused(id: string, runIds: string[], deciders: Who[], creator: string) {
    for (const decider of deciders)
      for (const path of ['approvals.approve', 'approvals.reject'] as const) {
        const a = await decide(path, decider, id);
        expect(a.status, `${path} ${JSON.stringify(a.body)}`).toBe(403);
        const { message } = (a.body as ErrorBody).error;
        expect(message).toContain('a second operator must');
        expect(message, 'names the person behind both sides').toContain(creator);
      }
    for (const runId of runIds) expect((await plane.engine.getRun(runId))?.run.status).toBe('Waiting');
    expect((await apiClient(plane.url, cookies.admin).approvals.get.query({ id })).status).toBe('pending');
  }

  it('the drafter cannot decide with a token it made for someone else, single or bulk', async () => {
    for (const bulk of [false, true]) {
      const { id, runIds } = await draft({ cookie: cookies.admin }, bulk);
      await expectRefused(id, runIds, [{ token: tokens.anaByAdmin }, { token: tokens.benByAdmin }], names.admin);
    }
  });

  it('a draft made with a token someone made for the drafter cannot be decided by the token maker', async () => {
    for (const bulk of [false, true]) {
      const { id, runIds } = await draft({ token: tokens.anaByAdmin }, bulk);
      // The maker itself, and through another token it made (for ben): the same person each time.
      await expectRefused(id, runIds, [{ cookie: cookies.admin }, { token: tokens.benByAdmin }], names.admin);
    }
  });

  it('the draft row names the token maker, and a genuine second person still decides', async () => {
    const first = await draft({ token: tokens.anaByAdmin });
    const row = await plane.db.prisma.auditEvent.findFirst({
      where: { action: 'repair_drafted', target_id: first.id },
    });
    expect(row?.details).toMatchObject({ tokenCreatedBy: names.admin });
    // ben with its own token: neither ana nor the admin behind her token.
    const approved = await decide('approvals.approve', { token: tokens.ben }, first.id);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect((await plane.engine.getRun(first.runIds[0] ?? ''))?.run.status).toBe('Terminated');

    // A draft by admin is decided by ana with a token another admin (admin2) made for her.
    const second = await draft({ cookie: cookies.admin });
    const rejected = await decide('approvals.reject', { token: tokens.anaByAdmin2 }, second.id);
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);
    expect((await apiClient(plane.url, cookies.admin).approvals.get.query({ id: second.id })).status).toBe('rejected');
  });
});
