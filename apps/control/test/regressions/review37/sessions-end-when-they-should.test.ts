import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { apiClient, createTestOperator, rawCall, signInCookie, testDatabaseUrl } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

/** A GET of a history download with a cookie and/or an Authorization header. */
function download(url: string, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined> }>((resolve, reject) => {
    httpRequest(new URL(path, url), { headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    })
      .on('error', reject)
      .end();
  });
}

const setCookieOf = (h: Record<string, string | string[] | undefined>) => {
  const v = h['set-cookie'];
  return (Array.isArray(v) ? v[0] : v) ?? '';
};

/**
 * ADR 0015 (cookie attributes, server-side sessions, disabling ends sessions, roles read per request)
 * and ADR 0021 (a token is refused at once when revoked or its operator disabled), attacked over HTTP.
 */
describe('review 37: session cookies and the end of sessions and tokens', () => {
  let plane: ControlPlane;
  let clock = new Date('2026-06-01T10:00:00Z');
  const runId = '00000000-0000-4000-8000-000000000001';
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: await testDatabaseUrl('r37_sessions'),
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_SESSION_IDLE_SECONDS: '600',
        SAGAFLOW_SESSION_ABSOLUTE_SECONDS: '3600',
      }),
      undefined,
      { now: () => clock },
    );
  });
  afterAll(async () => {
    await plane.stop();
  });

  it('the session cookie is HttpOnly, SameSite=Strict, Path=/, and not readable by a script', async () => {
    const name = await createTestOperator(plane, 'viewer');
    const a = await rawCall(plane.url, 'auth.signIn', {
      type: 'mutation',
      input: { name, password: 'correct horse battery staple' },
    });
    expect(a.status).toBe(200);
    const c = setCookieOf(a.headers);
    expect(c).toMatch(/^sagaflow_session=[A-Za-z0-9_-]{40,};/);
    expect(c).toMatch(/;\s*HttpOnly/i);
    expect(c).toMatch(/;\s*SameSite=Strict/i);
    expect(c).toMatch(/;\s*Path=\/(;|$)/i);
    expect(c).not.toMatch(/;\s*Domain=/i);
  });

  it('signing in while carrying another valid session cookie issues a fresh session id (no fixation)', async () => {
    const planted = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));
    const victim = await createTestOperator(plane, 'operator');
    const a = await rawCall(plane.url, 'auth.signIn', {
      type: 'mutation',
      cookie: planted,
      input: { name: victim, password: 'correct horse battery staple' },
    });
    const fresh = setCookieOf(a.headers).split(';')[0] ?? '';
    expect(fresh).not.toBe(planted);
    // The planted cookie still names its own operator, never the one who signed in over it.
    const me = await rawCall(plane.url, 'auth.me', { cookie: planted });
    expect(JSON.stringify(me.body)).not.toContain(victim);
  });

  it('after sign-out a replayed cookie opens nothing: not the API, not a history download', async () => {
    const cookie = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));
    expect((await rawCall(plane.url, 'auth.signOut', { type: 'mutation', cookie })).status).toBe(200);
    expect((await rawCall(plane.url, 'auth.me', { cookie })).status).toBe(401);
    expect((await rawCall(plane.url, 'runs.list', { cookie, input: {} })).status).toBe(401);
    expect((await download(plane.url, `/history/runs/${runId}`, { cookie })).status).toBe(401);
  });

  it('disabling an operator ends its live session and its token at the very next request', async () => {
    const adminCookie = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
    const name = await createTestOperator(plane, 'operator');
    const cookie = await signInCookie(plane.url, name);
    const { token } = await apiClient(plane.url, cookie).tokens.create.mutate({ name: 'ci' });
    expect((await rawCall(plane.url, 'auth.me', { authorization: `Bearer ${token}` })).status).toBe(200);
    await apiClient(plane.url, adminCookie).operators.setDisabled.mutate({ name, disabled: true });
    expect((await rawCall(plane.url, 'auth.me', { cookie })).status).toBe(401);
    expect((await rawCall(plane.url, 'auth.me', { authorization: `Bearer ${token}` })).status).toBe(401);
    expect((await download(plane.url, `/history/runs/${runId}`, { cookie })).status).toBe(401);
    // Enabling it again does not bring the old session back.
    await apiClient(plane.url, adminCookie).operators.setDisabled.mutate({ name, disabled: false });
    expect((await rawCall(plane.url, 'auth.me', { cookie })).status).toBe(401);
  });

  it('demoting an admin takes its admin powers from its open session and its token at once', async () => {
    const adminCookie = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
    const name = await createTestOperator(plane, 'admin');
    const cookie = await signInCookie(plane.url, name);
    const { token } = await apiClient(plane.url, cookie).tokens.create.mutate({ name: 'ci' });
    expect((await rawCall(plane.url, 'operators.list', { cookie })).status).toBe(200);
    await apiClient(plane.url, adminCookie).operators.setRole.mutate({ name, role: 'viewer' });
    expect((await rawCall(plane.url, 'operators.list', { cookie })).status).toBe(403);
    expect((await rawCall(plane.url, 'operators.list', { authorization: `Bearer ${token}` })).status).toBe(403);
    const start = { flowName: 'demo.order', input: { orderId: 'r37', amount: 1 } };
    expect((await rawCall(plane.url, 'runs.start', { type: 'mutation', cookie, input: start })).status).toBe(403);
  });

  it('a session past its idle expiry is refused by the history download as by the API', async () => {
    const cookie = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));
    expect((await download(plane.url, `/history/runs/${runId}`, { cookie })).status).toBe(404);
    clock = new Date(clock.getTime() + 601_000);
    expect((await download(plane.url, `/history/runs/${runId}`, { cookie })).status).toBe(401);
    expect((await rawCall(plane.url, 'auth.me', { cookie })).status).toBe(401);
  });

  it('the history download refuses no session, a forged cookie, and a bearer token without a cookie', async () => {
    expect((await download(plane.url, `/history/runs/${runId}`, {})).status).toBe(401);
    expect((await download(plane.url, `/history/runs/${runId}`, { cookie: 'sagaflow_session=forged' })).status).toBe(
      401,
    );
    expect(
      (await download(plane.url, `/history/instances/${runId}`, { authorization: 'Bearer sgf_nope' })).status,
    ).toBe(401);
  });
});

describe('review 37: the cookie is Secure when SAGAFLOW_COOKIE_SECURE says the console is served over https', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: await testDatabaseUrl('r37_secure'),
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_COOKIE_SECURE: 'true',
      }),
    );
  });
  afterAll(async () => {
    await plane.stop();
  });

  it('sign-in and sign-out both set a Secure cookie', async () => {
    const name = await createTestOperator(plane, 'viewer');
    const a = await rawCall(plane.url, 'auth.signIn', {
      type: 'mutation',
      input: { name, password: 'correct horse battery staple' },
    });
    expect(setCookieOf(a.headers)).toMatch(/;\s*Secure/i);
    const cookie = setCookieOf(a.headers).split(';')[0] ?? '';
    const out = await rawCall(plane.url, 'auth.signOut', { type: 'mutation', cookie });
    expect(setCookieOf(out.headers)).toMatch(/;\s*Secure/i);
    expect(setCookieOf(out.headers)).toMatch(/Max-Age=0/i);
  });
});
