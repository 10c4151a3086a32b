import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { apiClient, createTestOperator, rejection, signInCookie, testDatabaseUrl } from './support/test-plane.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

/** What no response body may ever show: driver and ORM messages, file paths, source excerpts, stacks, SQL. */
const internals =
  /prisma|invocation|\/work\/|node_modules|\.ts:\d+|\bat \S+ \(|\bselect\b.*\bfrom\b|\binsert into\b|\bupdate "|22021|22P05|invalid byte sequence/i;

/**
 * Issue 13, items 8 and 9, through the API: NUL in runs.list / runs.start was a 500 whose body
 * showed the Prisma message, an absolute path and a source excerpt; 200 batched runs.list calls
 * returned 241 MB and /healthz stalled behind them. Bad input is a 400 naming the field; bodies
 * and batches are bounded; nothing internal reaches a response.
 */
describe('the API refuses bad input with a 4xx naming the field, and bounds bodies and batches', () => {
  let plane: ControlPlane;
  let api: ReturnType<typeof apiClient>;
  let cookie: string;
  beforeAll(async () => {
    const url = await testDatabaseUrl('bounds');
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: url,
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_API_MAX_BODY_BYTES: String(64 * 1024),
        SAGAFLOW_API_MAX_BATCH_SIZE: '20',
      }),
    );
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'operator'));
    api = apiClient(plane.url, cookie);
  });
  afterAll(async () => {
    await plane.stop();
  });

  async function raw(path: string, init?: RequestInit) {
    const res = await fetch(`${plane.url}${path}`, {
      ...init,
      headers: { ...(init?.headers as Record<string, string> | undefined), cookie },
    });
    return { status: res.status, text: await res.text() };
  }

  it('NUL in runs.list flowName is a 400 naming input.flowName, with no internals in the body', async () => {
    const input = encodeURIComponent(JSON.stringify({ flowName: 'demo\u0000order' }));
    const res = await raw(`/trpc/runs.list?input=${input}`);
    expect(res.status).toBe(400);
    expect(res.text).not.toMatch(internals);
    expect(JSON.parse(res.text)).toMatchObject({ error: { data: { field: 'input.flowName', httpStatus: 400 } } });
    expect(await rejection(api.runs.list.query({ flowName: 'a\u0000b' }))).toMatchObject({
      status: 400,
      field: 'input.flowName',
    });
  });

  for (const [label, body, field] of [
    [
      'businessKey',
      { flowName: 'demo.order', input: { orderId: 'o', amount: 1 }, businessKey: 'k\u0000' },
      'input.businessKey',
    ],
    ['a tag', { flowName: 'demo.order', input: { orderId: 'o', amount: 1 }, tags: ['ok', 't\u0000'] }, 'input.tags'],
    ['the flow input', { flowName: 'demo.order', input: { orderId: 'o\u0000', amount: 1 } }, 'input.input.orderId'],
    ['a key of the flow input', { flowName: 'demo.order', input: { 'k\u0000': 1 } }, 'input.input'],
    ['a flow name holding NUL', { flowName: '\u0000', input: {} }, 'input.flowName'],
    [
      'the flow input (lone surrogate)',
      { flowName: 'demo.order', input: { orderId: 'sur-\ud800', amount: 1 } },
      'input.input.orderId',
    ],
  ] as const) {
    it(`NUL or a lone surrogate in runs.start ${label} is a 400 naming ${field}, with no internals, nothing started`, async () => {
      const before = (await api.runs.list.query({ limit: 500 })).length;
      const res = await raw('/trpc/runs.start', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(400);
      expect(res.text).not.toMatch(internals);
      const data = (JSON.parse(res.text) as { error: { data: { field: string } } }).error.data;
      expect(data.field.startsWith(field)).toBe(true);
      expect((JSON.parse(res.text) as { error: { message: string } }).error.message).toContain(data.field);
      expect((await api.runs.list.query({ limit: 500 })).length).toBe(before);
    });
  }

  it('an unregistered flow name in runs.start is a 400 naming input.flowName in its field and message (found by api-fuzz), nothing started', async () => {
    const before = (await api.runs.list.query({ limit: 500 })).length;
    const refused = await rejection(api.runs.start.mutate({ flowName: 'no.such.flow', input: {} }));
    expect(refused).toMatchObject({ status: 400, field: 'input.flowName' });
    expect(refused.message).toContain('input.flowName');
    expect((await api.runs.list.query({ limit: 500 })).length).toBe(before);
  });

  it('a body over the limit is a 413 saying so; the plane keeps answering', async () => {
    const res = await raw('/trpc/runs.start', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ flowName: 'demo.order', input: { pad: 'x'.repeat(100 * 1024) } }),
    });
    expect(res.status).toBe(413);
    expect(res.text).toMatch(/SAGAFLOW_API_MAX_BODY_BYTES/);
    expect(res.text).not.toMatch(internals);
    expect((await raw('/healthz')).status).toBe(200);
  });

  function batch(n: number) {
    const paths = Array.from({ length: n }, () => 'runs.list').join(',');
    const inputs = Object.fromEntries(Array.from({ length: n }, (_, i) => [String(i), { limit: 500 }]));
    return raw(`/trpc/${paths}?batch=1&input=${encodeURIComponent(JSON.stringify(inputs))}`);
  }

  it('a batch over the limit is a 400 saying so; one at the limit is answered', async () => {
    const over = await batch(21);
    expect(over.status).toBe(400);
    expect(over.text).toMatch(/SAGAFLOW_API_MAX_BATCH_SIZE/);
    const atLimit = await batch(20);
    expect(atLimit.status).toBe(200);
    expect(JSON.parse(atLimit.text)).toHaveLength(20);
  });

  it('/healthz answers while over-long batches are refused', async () => {
    const storm = Array.from({ length: 10 }, () => batch(200));
    const health = await raw('/healthz');
    expect(health.status).toBe(200);
    for (const r of await Promise.all(storm)) expect(r.status).toBe(400);
  });
});

describe('an error the API does not know is a generic 500 naming a request id, its detail only in the log', () => {
  it('says "internal error", carries no internals, and logs the detail under the same request id', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const url = await testDatabaseUrl('internal');
    const plane = await startControlPlane(
      parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'info' }),
      pino({ level: 'info' }, sink),
    );
    const cookie = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));
    try {
      // The engine's database goes away under the API: every read is now an unknown driver error.
      await plane.db.prisma.$executeRawUnsafe('alter table "sagaflow"."flow_runs" rename to "flow_runs_gone"');
      const res = await fetch(`${plane.url}/trpc/runs.list`, { headers: { cookie } });
      const text = await res.text();
      expect(res.status).toBe(500);
      expect(text).not.toMatch(internals);
      const message = (JSON.parse(text) as { error: { message: string } }).error.message;
      const id = /internal error, see the control plane log \(request id ([\w-]+)\)/.exec(message)?.[1];
      expect(id, message).toBeTruthy();
      expect(res.headers.get('x-request-id')).toBe(id);
      const logged = lines.map(
        (l) => JSON.parse(l) as { requestId?: string; msg?: string; err?: { message?: string } },
      );
      const entry = logged.find((l) => l.requestId === id);
      expect(entry?.err?.message ?? '').toMatch(/flow_runs/);
    } finally {
      await plane.db.prisma.$executeRawUnsafe('alter table "sagaflow"."flow_runs_gone" rename to "flow_runs"');
      await plane.stop();
    }
  });
});
