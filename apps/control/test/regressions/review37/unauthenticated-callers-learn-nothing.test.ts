import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { apiClient, createTestOperator, rawCall, signInCookie, testDatabaseUrl } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

function get(url: string, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    httpRequest(new URL(path, url), { headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    })
      .on('error', reject)
      .end();
  });
}

/** What would tell an outsider about the inside: stacks, SQL, driver names, file paths. */
const internals = /\bat .+:\d+:\d+|node_modules|\/src\/|\.ts\b|prisma|select |postgres(ql)?:\/\/|stack/i;

/**
 * ADR 0015 (one answer for an unknown name and a wrong password), ADR 0017 (/metrics off by default,
 * /readyz names no database detail), ADR 0021 (another operator's token is 404 to a non-admin), and
 * format-api-error.ts (no internals in an answer), attacked by callers who are not signed in or who
 * reach for someone else's credential.
 */
describe("review 37: outsiders learn nothing, and an operator cannot reach another one's token", () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({ DATABASE_URL: await testDatabaseUrl('r37_leaks'), CONTROL_PORT: '0', LOG_LEVEL: 'silent' }),
    );
  });
  afterAll(async () => {
    await plane.stop();
  });

  it('sign-in answers an unknown name, a wrong password and a disabled operator alike', async () => {
    const adminCookie = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
    const known = await createTestOperator(plane, 'operator');
    const disabled = await createTestOperator(plane, 'operator');
    await apiClient(plane.url, adminCookie).operators.setDisabled.mutate({ name: disabled, disabled: true });
    const answers = await Promise.all(
      [
        { name: 'nobody-by-this-name', password: 'correct horse battery staple' },
        { name: known, password: 'not the password at all' },
        { name: disabled, password: 'correct horse battery staple' },
      ].map((input, i) =>
        rawCall(plane.url, 'auth.signIn', { type: 'mutation', input, forwardedFor: `192.0.2.${i + 1}` }),
      ),
    );
    const shapes = answers.map((a) => ({
      status: a.status,
      message: (a.body as { error: { message: string } }).error.message,
      setCookie: a.headers['set-cookie'] ?? null,
    }));
    expect(shapes[0]).toEqual({ status: 401, message: 'wrong name or password', setCookie: null });
    expect(shapes[1]).toEqual(shapes[0]);
    expect(shapes[2]).toEqual(shapes[0]);
  });

  it('refusals to outsiders carry no stack, SQL or path, and /healthz, /readyz, /metrics say no more than they must', async () => {
    const refusals = [
      await rawCall(plane.url, 'runs.list', { input: {} }),
      await rawCall(plane.url, 'runs.list', { input: {}, cookie: 'sagaflow_session=forged' }),
      await rawCall(plane.url, 'runs.get', { input: { id: 'not-a-uuid' } }),
      await rawCall(plane.url, 'no.such.procedure', {}),
      await rawCall(plane.url, 'auth.signIn', { type: 'mutation', input: { name: 'x', password: 'y', extra: 1 } }),
      await rawCall(plane.url, 'auth.me', { authorization: 'Bearer sgf_' + 'A'.repeat(43) }),
    ];
    for (const r of refusals) {
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      expect(JSON.stringify(r.body)).not.toMatch(internals);
    }
    const healthz = await get(plane.url, '/healthz');
    expect(JSON.parse(healthz.text)).toEqual({ status: 'ok' });
    const readyz = await get(plane.url, '/readyz');
    expect(readyz.text).not.toMatch(/postgres(ql)?:\/\/|password|@127\.0\.0\.1/i);
    expect((await get(plane.url, '/metrics')).status).toBe(404);
    expect((await get(plane.url, '/metrics', { authorization: 'Bearer x'.repeat(4) })).status).toBe(404);
  });

  it("an operator cannot list, revoke or use another operator's token, and is told nothing of it", async () => {
    const ana = await signInCookie(plane.url, await createTestOperator(plane, 'operator'));
    const benName = await createTestOperator(plane, 'operator');
    const ben = await signInCookie(plane.url, benName);
    const made = await apiClient(plane.url, ben).tokens.create.mutate({ name: 'ben-ci' });
    const revoke = await rawCall(plane.url, 'tokens.revoke', { type: 'mutation', cookie: ana, input: { id: made.id } });
    expect(revoke.status).toBe(404);
    const list = await rawCall(plane.url, 'tokens.list', { cookie: ana, input: { operator: benName } });
    expect(list.status).toBe(403);
    expect(JSON.stringify(list.body)).not.toContain(made.hint);
    const all = await rawCall(plane.url, 'tokens.list', { cookie: ana, input: { all: true } });
    expect(all.status).toBe(403);
    const forBen = await rawCall(plane.url, 'tokens.create', {
      type: 'mutation',
      cookie: ana,
      input: { name: 'as-ben', operator: benName },
    });
    expect(forBen.status).toBe(403);
    // Ben's token still works: nothing Ana did touched it.
    expect((await rawCall(plane.url, 'auth.me', { authorization: `Bearer ${made.token}` })).status).toBe(200);
  });
});
