import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { createTestOperator, rawCall, testDatabaseUrl, testPassword } from './support/test-plane.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

/** The clock sessions and the sign-in limit are measured by: the tests move it, nothing sleeps. */
let clock = new Date('2026-06-01T10:00:00Z');
const advance = (seconds: number) => (clock = new Date(clock.getTime() + seconds * 1000));

const errorMessage = (body: unknown) => (body as { error?: { message?: string } }).error?.message ?? '';

describe('sign-in, sessions, sign-out, the sign-in limit and the audit trail, over HTTP', () => {
  let plane: ControlPlane;
  let databaseUrl: string;
  const printed: string[] = [];
  beforeAll(async () => {
    const url = (databaseUrl = await testDatabaseUrl('sessions'));
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: url,
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_SESSION_IDLE_SECONDS: '600',
        SAGAFLOW_SESSION_ABSOLUTE_SECONDS: '3600',
        SAGAFLOW_SIGNIN_WINDOW_SECONDS: '300',
        SAGAFLOW_SIGNIN_MAX_FAILURES_PER_ACCOUNT: '3',
        SAGAFLOW_SIGNIN_MAX_FAILURES_PER_ADDRESS: '5',
      }),
      undefined,
      { now: () => clock, print: (text) => printed.push(text) },
    );
  });
  afterAll(async () => {
    await plane.stop();
  });

  const signIn = (name: string, password: string, forwardedFor = '198.51.100.1') =>
    rawCall(plane.url, 'auth.signIn', { type: 'mutation', input: { name, password }, forwardedFor });
  const cookieOf = (answer: { headers: Record<string, string | string[] | undefined> }) => {
    const set = answer.headers['set-cookie'];
    return {
      header: (Array.isArray(set) ? set[0] : set) ?? '',
      pair: ((Array.isArray(set) ? set[0] : set) ?? '').split(';')[0] ?? '',
    };
  };
  const me = (cookie: string) => rawCall(plane.url, 'auth.me', { cookie });
  const audit = (action: string, targetId: string) =>
    plane.db.prisma.auditEvent.findMany({ where: { action, target_id: targetId }, orderBy: { at: 'asc' } });

  it('a first admin is created with a generated password, printed once, that signs in', async () => {
    const text = printed.join('');
    const password = /password: (\S+)/.exec(text)?.[1];
    expect(password, text).toBeTruthy();
    expect((await signIn('admin', password ?? '')).status).toBe(200);
    const row = await plane.db.prisma.operator.findUnique({ where: { name: 'admin' } });
    expect(row?.role).toBe('admin');
    expect(row?.password_hash).toMatch(/^\$argon2id\$/);
    expect(row?.password_hash).not.toContain(password);
  });

  it('signing in sets an httpOnly, SameSite=Strict cookie that opens a session; the row holds only its hash', async () => {
    const name = await createTestOperator(plane, 'operator');
    const answer = await signIn(name, testPassword);
    expect(answer.status).toBe(200);
    const { header, pair } = cookieOf(answer);
    expect(header).toMatch(/^sagaflow_session=[\w-]{40,};/);
    expect(header).toMatch(/; HttpOnly/i);
    expect(header).toMatch(/; SameSite=Strict/i);
    expect(header).toMatch(/; Path=\//i);
    const who = await me(pair);
    expect(who.status).toBe(200);
    expect(who.body).toMatchObject({ result: { data: { operator: { name, role: 'operator' } } } });
    const token = pair.split('=')[1] ?? '';
    expect(await plane.db.prisma.session.count({ where: { id: token } })).toBe(0);
    const ok = await audit('sign_in', name);
    expect(ok.map((e) => [e.outcome, e.address])).toEqual([['succeeded', '198.51.100.1']]);
  });

  it('a wrong password and an unknown name get the same 401 message, and both are audited as refused', async () => {
    const name = await createTestOperator(plane, 'viewer');
    const wrong = await signIn(name, 'not the password', '198.51.100.2');
    const unknown = await signIn('nobody-here', 'whatever', '198.51.100.2');
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(errorMessage(wrong.body)).toBe('wrong name or password');
    expect(errorMessage(unknown.body)).toBe(errorMessage(wrong.body));
    expect(wrong.headers['set-cookie']).toBeUndefined();
    expect((await audit('sign_in', name)).map((e) => [e.outcome, e.reason])).toEqual([['refused', 'wrong password']]);
    expect((await audit('sign_in', 'nobody-here')).map((e) => e.outcome)).toEqual(['refused']);
  });

  it('a name or password with a NUL or a lone surrogate is a 400 naming the field, and nothing is written', async () => {
    const before = await plane.db.prisma.auditEvent.count();
    for (const [name, password, field] of [
      ['ad\u0000min', 'x', 'input.name'],
      ['admin', 'pass\u0000word', 'input.password'],
      ['ad\uD800min', 'x', 'input.name'],
      ['admin', '\uDC00', 'input.password'],
    ] as const) {
      const answer = await signIn(name, password);
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ error: { data: { field } } });
    }
    expect(await plane.db.prisma.auditEvent.count()).toBe(before);
  });

  it('a session ends after its idle time; activity inside it keeps it open', async () => {
    const name = await createTestOperator(plane, 'viewer');
    const { pair } = cookieOf(await signIn(name, testPassword));
    advance(500);
    expect((await me(pair)).status).toBe(200);
    advance(500); // 1000 s since sign-in, 500 since the last request: still inside the 600 s idle window
    expect((await me(pair)).status).toBe(200);
    advance(601);
    const ended = await me(pair);
    expect(ended.status).toBe(401);
    expect(errorMessage(ended.body)).toBe('your session has ended; sign in again');
    advance(-1601);
  });

  it('a session ends at its absolute expiry however active it is', async () => {
    const name = await createTestOperator(plane, 'viewer');
    const { pair } = cookieOf(await signIn(name, testPassword));
    for (let elapsed = 0; elapsed < 3500; elapsed += 500) {
      expect((await me(pair)).status, `after ${elapsed} s`).toBe(200);
      advance(500);
    }
    advance(100); // 3600 s since sign-in
    expect((await me(pair)).status).toBe(401);
    advance(-3600);
  });

  it('signing out ends the session on the server (the old cookie opens nothing), clears the cookie and is audited', async () => {
    const name = await createTestOperator(plane, 'operator');
    const { pair } = cookieOf(await signIn(name, testPassword));
    const out = await rawCall(plane.url, 'auth.signOut', { type: 'mutation', cookie: pair });
    expect(out.status).toBe(200);
    expect(cookieOf(out).header).toMatch(/^sagaflow_session=;.*Max-Age=0/i);
    expect((await me(pair)).status).toBe(401);
    expect((await audit('sign_out', name)).map((e) => e.outcome)).toEqual(['succeeded']);
  });

  it('the sign-in limit per account: after 3 failures even the right password is refused (429) until the window passes', async () => {
    const name = await createTestOperator(plane, 'operator');
    // From three addresses: the account's limit does not depend on where the guesses come from.
    for (const address of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) {
      expect((await signIn(name, 'guess', address)).status).toBe(401);
      advance(1);
    }
    const limited = await signIn(name, testPassword, '203.0.113.4');
    expect(limited.status).toBe(429);
    expect(errorMessage(limited.body)).toMatch(/too many sign-in attempts; try again in \d+ s/);
    // The oldest failure (3 s ago) leaves the 300 s window in 297 s.
    expect(limited.headers['retry-after']).toBe('297');
    expect(limited.headers['set-cookie']).toBeUndefined();
    advance(296);
    expect((await signIn(name, testPassword, '203.0.113.4')).status).toBe(429);
    advance(2);
    expect((await signIn(name, testPassword, '203.0.113.4')).status).toBe(200);
    expect((await audit('sign_in', name)).map((e) => e.outcome)).toEqual([
      'refused',
      'refused',
      'refused',
      'rate_limited',
      'rate_limited',
      'succeeded',
    ]);
    advance(-301);
  });

  it('the sign-in limit per address: 5 failures on any names from one address stop that address, not others', async () => {
    const name = await createTestOperator(plane, 'operator');
    for (let i = 0; i < 5; i++) expect((await signIn(`guess-${i}`, 'guess', '192.0.2.77')).status).toBe(401);
    expect((await signIn(name, testPassword, '192.0.2.77')).status).toBe(429);
    expect((await signIn(name, testPassword, '192.0.2.78')).status).toBe(200);
  });

  it('a restart prints no password again and creates no second admin', async () => {
    await plane.stop();
    const again: string[] = [];
    plane = await startControlPlane(
      parseEnv({ DATABASE_URL: databaseUrl, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }),
      undefined,
      { print: (text) => again.push(text) },
    );
    expect(again).toEqual([]);
    expect(await plane.db.prisma.operator.count({ where: { role: 'admin' } })).toBe(1);
  });
});
