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

const noStore = (h: Record<string, string | string[] | undefined>) => String(h['cache-control'] ?? '');

/**
 * What an operator reads through the API (runs, their inputs, who is signed in, the secret of a new
 * token) must not be kept by a shared proxy or the browser's cache. The control plane already says
 * `no-store` on its history downloads (history-route.ts:63), its readiness answer and its 500s, and
 * the console's proxy says it on everything it forwards (proxy-to-control.ts:44); ADR 0015 lets a
 * browser reach the control plane directly (SAGAFLOW_ALLOWED_ORIGINS), and the CLI reaches it
 * directly through whatever proxy sits between. The standard: OWASP ASVS 4.0 V8.2.1 (anti-caching
 * headers on sensitive data), RFC 9111 section 5.2.2.5 (no-store).
 */
describe('review 37: authenticated API answers say Cache-Control: no-store', () => {
  let plane: ControlPlane;
  let cookie = '';
  let runId = '';
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({ DATABASE_URL: await testDatabaseUrl('r37_cache'), CONTROL_PORT: '0', LOG_LEVEL: 'silent' }),
    );
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
    runId = await startWaitingRun(plane, cookie);
  });
  afterAll(async () => {
    await plane.stop();
  });

  it('held: a history download says no-store', async () => {
    const res = await fetch(`${plane.url}/history/runs/${runId}`, { headers: { cookie } });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toContain('no-store');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="run-${runId}.json"`);
  });

  it('a run read with a session cookie (runs.get, runs.list, auth.me) says no-store', async () => {
    for (const [path, input] of [
      ['runs.get', { id: runId }],
      ['runs.list', {}],
      ['auth.me', undefined],
    ] as const) {
      const a = await rawCall(plane.url, path, { cookie, input });
      expect(a.status, path).toBe(200);
      expect(noStore(a.headers), `${path} Cache-Control`).toContain('no-store');
    }
  });

  it('a read with an API token, and the answer that carries a new token secret, say no-store', async () => {
    const { token } = await apiClient(plane.url, cookie).tokens.create.mutate({ name: 'cache' });
    const read = await rawCall(plane.url, 'runs.get', { authorization: `Bearer ${token}`, input: { id: runId } });
    expect(read.status).toBe(200);
    expect(noStore(read.headers), 'runs.get with a token').toContain('no-store');
    const created = await rawCall(plane.url, 'tokens.create', { type: 'mutation', cookie, input: { name: 'again' } });
    expect(created.status).toBe(200);
    expect(noStore(created.headers), 'tokens.create').toContain('no-store');
  });
});
