import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import {
  apiClient,
  createTestOperator,
  rawCall,
  signInCookie,
  testDatabaseUrl,
  testPassword,
} from './support/test-plane.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

type ErrorBody = { error: { message: string; data: { httpStatus: number; field: string | null } } };
type Data<T = Record<string, unknown>> = { result: { data: T } };

/**
 * ADR 0111: a signed-in operator changes its own password. The current one is required and is
 * checked under the sign-in limit; the new one follows operators.create's rule; the operator's other
 * sessions end and the one it asked from stays; the audit trail has a `password_changed` row.
 */
describe('auth.changePassword', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: await testDatabaseUrl('fix37_password'),
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_SIGNIN_MAX_FAILURES_PER_ACCOUNT: '3',
        SAGAFLOW_SIGNIN_MAX_FAILURES_PER_ADDRESS: '50',
      }),
    );
  });
  afterAll(async () => {
    await plane.stop();
  });

  const change = (cookie: string, input: unknown) =>
    rawCall(plane.url, 'auth.changePassword', { type: 'mutation', cookie, input });
  const me = (cookie: string) => rawCall(plane.url, 'auth.me', { cookie });
  const newPassword = 'a much longer new passphrase';

  it('needs the current password, keeps this session, ends the others, and the new one signs in', async () => {
    const name = await createTestOperator(plane, 'viewer');
    const here = await signInCookie(plane.url, name);
    const elsewhere = await signInCookie(plane.url, name);
    const { token } = await apiClient(plane.url, here).tokens.create.mutate({ name: 'kept' });

    const wrong = await change(here, { currentPassword: 'not the password', newPassword });
    expect(wrong.status).toBe(403);
    expect((wrong.body as ErrorBody).error.message).toContain('current password is wrong');
    const short = await change(here, { currentPassword: testPassword, newPassword: 'short' });
    expect(short.status).toBe(400);
    expect((short.body as ErrorBody).error.data.field).toBe('input.newPassword');
    const same = await change(here, { currentPassword: testPassword, newPassword: testPassword });
    expect(same.status).toBe(400);
    // Nothing changed so far: both sessions open, the old password still good.
    expect((await me(elsewhere)).status).toBe(200);

    const ok = await change(here, { currentPassword: testPassword, newPassword });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect((ok.body as Data).result.data).toEqual({ changed: true, otherSessionsEnded: 1 });
    expect((await me(here)).status).toBe(200);
    expect((await me(elsewhere)).status).toBe(401);
    // An API token is a credential of its own (revoked with tokens.revoke), not a session.
    expect((await rawCall(plane.url, 'auth.me', { authorization: `Bearer ${token}` })).status).toBe(200);
    await expect(signInCookie(plane.url, name)).rejects.toThrow(/401/);
    expect(await signInCookie(plane.url, name, newPassword)).toMatch(/^sagaflow_session=/);

    const rows = await plane.db.prisma.auditEvent.findMany({
      where: { action: 'password_changed', actor: name },
    });
    expect(rows.map((r) => [r.outcome, r.target_id, r.details])).toEqual([
      ['succeeded', name, { sessionsEnded: 1, via: null }],
    ]);
  });

  it('wrong current passwords count against the sign-in limit: past it, even the right one waits', async () => {
    const name = await createTestOperator(plane, 'operator');
    const cookie = await signInCookie(plane.url, name);
    for (let i = 0; i < 3; i++)
      expect((await change(cookie, { currentPassword: `guess ${i}`, newPassword })).status).toBe(403);
    const limited = await change(cookie, { currentPassword: testPassword, newPassword });
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    // The guesses were counted as the account's refused sign-ins: the sign-in page is closed to it too.
    await expect(signInCookie(plane.url, name)).rejects.toThrow(/429/);
    // And nothing changed: the session is still open.
    expect((await me(cookie)).status).toBe(200);
  });
});
