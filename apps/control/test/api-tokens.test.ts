import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { createTestOperator, rawCall, signInCookie, testDatabaseUrl, type RawAnswer } from './support/test-plane.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

/** The clock sessions, tokens and the limits are measured by: the tests move it, nothing sleeps. */
let clock = new Date('2026-06-01T10:00:00Z');
const advance = (seconds: number) => (clock = new Date(clock.getTime() + seconds * 1000));

const message = (a: RawAnswer) => (a.body as { error?: { message?: string } }).error?.message ?? '';
const data = <T>(a: RawAnswer) => (a.body as { result: { data: T } }).result.data;

interface Created {
  id: string;
  token: string;
  name: string;
  operator: string;
  hint: string;
  expiresAt: string | null;
  state: string;
}

describe('operator API tokens over HTTP: create, list, revoke, Bearer sign-in, audit and limits', () => {
  let plane: ControlPlane;
  const names = { viewer: '', operator: '', admin: '' };
  const cookies = { viewer: '', operator: '', admin: '' };
  beforeAll(async () => {
    const url = await testDatabaseUrl('api_tokens');
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: url,
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_SIGNIN_WINDOW_SECONDS: '300',
        SAGAFLOW_SIGNIN_MAX_FAILURES_PER_ADDRESS: '3',
        SAGAFLOW_SESSION_IDLE_SECONDS: '8640000',
        SAGAFLOW_SESSION_ABSOLUTE_SECONDS: '8640000',
      }),
      undefined,
      { now: () => clock, print: () => undefined },
    );
    for (const role of ['viewer', 'operator', 'admin'] as const) {
      names[role] = await createTestOperator(plane, role);
      cookies[role] = await signInCookie(plane.url, names[role]);
    }
  });
  afterAll(async () => {
    await plane.stop();
  });

  const create = (cookie: string, input: Record<string, unknown>) =>
    rawCall(plane.url, 'tokens.create', { type: 'mutation', input, cookie });
  const asToken = (token: string, path: string, options: Parameters<typeof rawCall>[2] = {}) =>
    rawCall(plane.url, path, { ...options, authorization: `Bearer ${token}` });
  async function tokenFor(role: keyof typeof cookies, name = `t-${randomUUID().slice(0, 6)}`) {
    const answer = await create(cookies[role], { name });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return data<Created>(answer);
  }

  it('a token is shown once, starts with sgf_, and the table keeps only its sha-256 and first characters', async () => {
    const created = await tokenFor('operator', 'laptop');
    expect(created.token).toMatch(/^sgf_[A-Za-z0-9_-]{43}$/);
    expect(created).toMatchObject({ name: 'laptop', operator: names.operator, state: 'active', expiresAt: null });
    const rows = await plane.db.prisma.$queryRawUnsafe<Record<string, unknown>[]>(
      `select * from sagaflow.api_tokens where id = $1::uuid`,
      created.id,
    );
    expect(rows).toHaveLength(1);
    const stored = JSON.stringify(rows[0]);
    expect(stored).not.toContain(created.token);
    expect(stored).not.toContain(created.token.slice(12));
    expect(rows[0]?.secret_hash).toBe(createHash('sha256').update(created.token).digest('hex'));
    expect(rows[0]?.hint).toBe(created.token.slice(0, 12));
    // Listing never returns the secret.
    const listed = await rawCall(plane.url, 'tokens.list', { cookie: cookies.operator });
    expect(JSON.stringify(listed.body)).not.toContain(created.token);
    expect(data<{ id: string }[]>(listed).map((t) => t.id)).toContain(created.id);
    const audit = await plane.db.prisma.auditEvent.findMany({
      where: { action: 'token_created', target_id: created.id },
    });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: names.operator, outcome: 'succeeded' });
    expect(JSON.stringify(audit[0]?.details)).not.toContain(created.token);
  });

  it('Bearer acts as the token operator with its role now: a role change applies at the next request', async () => {
    const who = await createTestOperator(plane, 'operator');
    const created = data<Created>(await create(cookies.admin, { name: 'ci', operator: who }));
    const me = await asToken(created.token, 'auth.me');
    expect(me.status).toBe(200);
    expect(data<{ operator: { name: string; role: string }; token: { name: string } }>(me)).toMatchObject({
      operator: { name: who, role: 'operator' },
      token: { name: 'ci' },
    });
    await rawCall(plane.url, 'operators.setRole', {
      type: 'mutation',
      input: { name: who, role: 'viewer' },
      cookie: cookies.admin,
    });
    const start = await asToken(created.token, 'runs.start', {
      type: 'mutation',
      input: { flowName: 'demo.reservation', input: { orderId: 'x' } },
    });
    expect(start.status).toBe(403);
    expect(message(start)).toContain('needs the operator role');
  });

  it('an operator manages only its own tokens; an admin anyone’s; another’s token is not found, not forbidden', async () => {
    const forOther = await create(cookies.operator, { name: 'x', operator: names.viewer });
    expect(forOther.status).toBe(403);
    expect(message(forOther)).toContain('only an admin');
    expect((await rawCall(plane.url, 'tokens.list', { input: { all: true }, cookie: cookies.operator })).status).toBe(
      403,
    );
    const viewers = await tokenFor('viewer');
    const revokeOther = await rawCall(plane.url, 'tokens.revoke', {
      type: 'mutation',
      input: { id: viewers.id },
      cookie: cookies.operator,
    });
    expect(revokeOther.status).toBe(404);
    expect((await asToken(viewers.token, 'auth.me')).status).toBe(200);
    const byAdmin = await rawCall(plane.url, 'tokens.revoke', {
      type: 'mutation',
      input: { id: viewers.id },
      cookie: cookies.admin,
    });
    expect(byAdmin.status).toBe(200);
    expect(data<{ revokedBy: string; state: string }>(byAdmin)).toMatchObject({
      revokedBy: names.admin,
      state: 'revoked',
    });
  });

  it('a revoked, expired or unknown token is a 401 that says what to do, and each refusal is audited', async () => {
    const revoked = await tokenFor('operator');
    const r = await asToken(revoked.token, 'tokens.revoke', { type: 'mutation', input: { id: revoked.id } });
    expect(r.status).toBe(200);
    const afterRevoke = await asToken(revoked.token, 'runs.page', { forwardedFor: '198.51.100.10' });
    expect(afterRevoke.status).toBe(401);
    expect(message(afterRevoke)).toMatch(
      /was revoked at .* by .*; create a token with `npm run sagaflow -- token create/,
    );

    const expiring = data<Created>(await create(cookies.operator, { name: 'short', expiresInDays: 1 }));
    expect((await asToken(expiring.token, 'auth.me', { forwardedFor: '198.51.100.11' })).status).toBe(200);
    advance(86_400);
    const expired = await asToken(expiring.token, 'auth.me', { forwardedFor: '198.51.100.11' });
    expect(expired.status).toBe(401);
    expect(message(expired)).toContain('expired at');

    const unknown = await asToken(`sgf_${'A'.repeat(43)}`, 'auth.me', { forwardedFor: '198.51.100.12' });
    expect(unknown.status).toBe(401);
    expect(message(unknown)).toContain('this API token is not known');

    const refusals = await plane.db.prisma.auditEvent.findMany({
      where: { action: 'token_sign_in', outcome: 'refused', address: { startsWith: '198.51.100.1' } },
    });
    expect(refusals.map((e) => e.reason).sort()).toEqual(['expired', 'revoked', 'unknown token']);
    expect(refusals.find((e) => e.reason === 'revoked')?.target_id).toBe(revoked.id);
  });

  it('refused tokens from one address are rate-limited (429) without a lookup; another address is not', async () => {
    const good = await tokenFor('viewer');
    for (let i = 0; i < 3; i++)
      expect((await asToken('sgf_wrong', 'auth.me', { forwardedFor: '203.0.113.50' })).status).toBe(401);
    const limited = await asToken(good.token, 'auth.me', { forwardedFor: '203.0.113.50' });
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('300');
    expect(message(limited)).toContain('too many refused API tokens from this address');
    expect((await asToken(good.token, 'auth.me', { forwardedFor: '203.0.113.51' })).status).toBe(200);
    advance(301);
    expect((await asToken(good.token, 'auth.me', { forwardedFor: '203.0.113.50' })).status).toBe(200);
  });

  it('twenty bad tokens at once from one address: exactly the limit are told "not known", the rest 429', async () => {
    // A burst passes the first count together; each refusal is counted again under the address's
    // lock before it is recorded and told (ADR 0107 addendum).
    const address = '203.0.113.77';
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        asToken(`sgf_${String(i).padStart(43, 'B')}`, 'auth.me', { forwardedFor: address }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 401)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(17);
    expect(answers.filter((a) => message(a).includes('this API token is not known'))).toHaveLength(3);
    const rows = await plane.db.prisma.auditEvent.groupBy({
      by: ['outcome'],
      where: { action: 'token_sign_in', address },
      _count: true,
    });
    expect(Object.fromEntries(rows.map((r) => [r.outcome, r._count]))).toEqual({ refused: 3, rate_limited: 17 });
  });

  it('a bearer mutation is not refused for its Origin (no cookie is used), but a foreign Host still is', async () => {
    const created = await tokenFor('operator');
    const input = { name: `via-origin-${randomUUID().slice(0, 4)}` };
    const foreignOrigin = await asToken(created.token, 'tokens.create', {
      type: 'mutation',
      input,
      origin: 'https://attacker.example',
    });
    expect(foreignOrigin.status).toBe(200);
    // The same mutation with the session cookie and that Origin is refused, as before.
    const withCookie = await create(cookies.operator, input);
    expect(withCookie.status).toBe(200);
    const cookieForeign = await rawCall(plane.url, 'tokens.create', {
      type: 'mutation',
      input,
      cookie: cookies.operator,
      origin: 'https://attacker.example',
    });
    expect(cookieForeign.status).toBe(403);
    const foreignHost = await asToken(created.token, 'auth.me', { host: 'attacker.example' });
    expect(foreignHost.status).toBe(403);
    // A bearer request with a valid cookie but a bad token is refused: the cookie is not a fallback.
    const both = await rawCall(plane.url, 'auth.me', { cookie: cookies.operator, authorization: 'Bearer sgf_nope' });
    expect(both.status).toBe(401);
  });

  it('a token cannot sign out (it is revoked instead), and its creation by a token names that token', async () => {
    const created = await tokenFor('operator', 'maker');
    const out = await asToken(created.token, 'auth.signOut', { type: 'mutation', input: {} });
    expect(out.status).toBe(400);
    expect(message(out)).toContain('revoke the token instead');
    const child = data<Created>(
      await asToken(created.token, 'tokens.create', { type: 'mutation', input: { name: 'child' } }),
    );
    const audit = await plane.db.prisma.auditEvent.findFirst({
      where: { action: 'token_created', target_id: child.id },
    });
    expect(audit?.details).toMatchObject({ via: `token maker (${created.hint}…)` });
  });

  it('bad input names the field and creates nothing', async () => {
    const before = await plane.db.prisma.apiToken.count();
    const answers = await Promise.all([
      create(cookies.operator, { name: '' }),
      create(cookies.operator, { name: 'x', expiresInDays: 0 }),
      create(cookies.operator, { name: 'a\u0000b' }),
      create(cookies.operator, { name: 'x', secret: 'mine' }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([400, 400, 400, 400]);
    expect(answers.map((a) => (a.body as { error: { data: { field: string } } }).error.data.field)).toEqual([
      'input.name',
      'input.expiresInDays',
      'input.name',
      'input',
    ]);
    expect(await plane.db.prisma.apiToken.count()).toBe(before);
  });
});
