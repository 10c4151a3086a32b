import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { createTestOperator, rawCall, signInCookie, testDatabaseUrl } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

/** Any request, as a browser or a hostile page could shape it. */
function send(
  url: string,
  path: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    httpRequest(new URL(path, url), { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    })
      .on('error', reject)
      .end(body);
  });
}

const startInput = { flowName: 'demo.order', input: { orderId: 'r37-csrf', amount: 1 } };

/**
 * ADR 0015: "CSRF: SameSite=Strict plus an Origin check, no token": a mutation whose Origin is not
 * allowed is refused before it runs. Attacked with the shapes a page can send without a preflight
 * (GET, form and text/plain bodies, Origin: null from a sandboxed frame) and with CORS preflights.
 */
describe('review 37: cross-site requests change nothing and CORS is never granted', () => {
  let plane: ControlPlane;
  let cookie = '';
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: await testDatabaseUrl('r37_csrf'),
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_ALLOWED_ORIGINS: 'http://console.test:3000',
      }),
    );
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
  });
  afterAll(async () => {
    await plane.stop();
  });
  const runs = () => plane.db.prisma.flowRun.count();

  it('Origin: null (a sandboxed frame, a data: URL) is refused for a mutation with a valid cookie', async () => {
    const before = await runs();
    const a = await rawCall(plane.url, 'runs.start', { type: 'mutation', input: startInput, cookie, origin: 'null' });
    expect(a.status).toBe(403);
    expect(await runs()).toBe(before);
  });

  it('a mutation sent as GET (a link, an <img>), batched or not, runs nothing', async () => {
    const before = await runs();
    const input = encodeURIComponent(JSON.stringify(startInput));
    const one = await send(plane.url, `/trpc/runs.start?input=${input}`, 'GET', { cookie });
    expect(one.status).toBeGreaterThanOrEqual(400);
    const batch = encodeURIComponent(JSON.stringify({ 0: startInput }));
    const two = await send(plane.url, `/trpc/runs.start,auth.signOut?batch=1&input=${batch}`, 'GET', { cookie });
    expect(two.status).toBeGreaterThanOrEqual(400);
    expect(await runs()).toBe(before);
    expect((await rawCall(plane.url, 'auth.me', { cookie })).status).toBe(200);
  });

  it('a form-encoded or text/plain POST (no preflight) from a foreign page runs nothing', async () => {
    const before = await runs();
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'])
      for (const origin of ['http://attacker.example', 'http://console.test:3000.attacker.example']) {
        const a = await send(
          plane.url,
          '/trpc/runs.start',
          'POST',
          { cookie, origin, 'content-type': contentType },
          JSON.stringify(startInput),
        );
        expect(a.status, `${contentType} ${origin} ${a.text}`).toBeGreaterThanOrEqual(400);
      }
    expect(await runs()).toBe(before);
  });

  it('a foreign page cannot sign the browser out (the session stays) nor batch a mutation behind a query', async () => {
    const out = await rawCall(plane.url, 'auth.signOut', {
      type: 'mutation',
      cookie,
      origin: 'http://attacker.example',
    });
    expect(out.status).toBe(403);
    expect(out.headers['set-cookie']).toBeUndefined();
    expect((await rawCall(plane.url, 'auth.me', { cookie })).status).toBe(200);
    const before = await runs();
    const batch = await send(
      plane.url,
      '/trpc/auth.me,runs.start?batch=1',
      'POST',
      { cookie, origin: 'http://attacker.example', 'content-type': 'application/json' },
      JSON.stringify({ 0: {}, 1: startInput }),
    );
    expect(batch.text).not.toMatch(/"runId"/);
    expect(await runs()).toBe(before);
  });

  it('no answer grants CORS: a preflight, a query and a mutation from a foreign Origin get no Access-Control-Allow-*', async () => {
    const origin = 'http://attacker.example';
    const answers = [
      await send(plane.url, '/trpc/runs.start', 'OPTIONS', {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,authorization',
      }),
      await send(plane.url, '/trpc/auth.me', 'GET', { origin, cookie }),
      await send(plane.url, '/trpc/runs.list?input=%7B%7D', 'GET', { origin, cookie }),
      await send(plane.url, `/history/runs/00000000-0000-4000-8000-000000000001`, 'GET', { origin, cookie }),
      await send(plane.url, '/healthz', 'GET', { origin }),
      await send(plane.url, '/readyz', 'GET', { origin }),
    ];
    for (const a of answers) {
      const granted = Object.keys(a.headers).filter((h) => h.startsWith('access-control-allow'));
      expect(granted, a.text).toEqual([]);
    }
  });
});
