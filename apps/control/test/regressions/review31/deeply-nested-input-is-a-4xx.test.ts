import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { createTestOperator, rawCall, signInCookie, testDatabaseUrl } from '../../support/test-plane.ts';
import { appRouter } from '../../../src/api/app-router.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

type ProcedureDef = { _def: { type: 'query' | 'mutation' | 'subscription' } };

/** JSON nested `depth` arrays deep, built as text (building it as a value and stringifying would overflow here). */
const deepText = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('invariant 6: input nested deeper than anything sensible is a 4xx, never a 500', () => {
  let plane: ControlPlane;
  let cookie = '';
  beforeAll(async () => {
    const url = await testDatabaseUrl('r31_deep_json');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
  });
  afterAll(async () => {
    await plane.stop();
  });

  /** POSTs `body` (raw JSON text) to a mutation with the admin's session. */
  async function post(path: string, body: string) {
    const res = await fetch(`${plane.url}/trpc/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body,
    });
    return { status: res.status, text: await res.text() };
  }

  const deep = deepText(100_000);
  const mutations = Object.entries(appRouter._def.procedures as unknown as Record<string, ProcedureDef>)
    .filter(([path, p]) => p._def.type === 'mutation' && path !== 'auth.signOut')
    .map(([path]) => path);

  it('every mutation answers a body that IS a 100,000-deep array with a 4xx', async () => {
    const answers: Record<string, number> = {};
    for (const path of mutations) answers[path] = (await post(path, deep)).status;
    const bad = Object.entries(answers).filter(([, s]) => s < 400 || s >= 500);
    expect(bad).toEqual([]);
  });

  it('deep values inside fields the engine reads are a 4xx naming a field (repairs, policy)', async () => {
    const runId = randomUUID();
    const bodies: Record<string, string> = {
      'repairs.applyOne': `{"kind":"run.signal","target":{"runId":"${runId}"},"expected":{"runStatus":"Waiting"},"reason":"r","idempotencyKey":"${randomUUID()}","params":${deep}}`,
      'repairs.applyBulk': `{"kind":"run.cancel","reason":"r","idempotencyKey":"${randomUUID()}","items":[${deep}]}`,
      'approvalPolicy.set': `{"gatedCommands":[],"bulkThreshold":null,"extra":${deep}}`,
    };
    const answers: Record<string, { status: number; field: unknown }> = {};
    for (const [path, body] of Object.entries(bodies)) {
      const a = await post(path, body);
      answers[path] = {
        status: a.status,
        field: (JSON.parse(a.text) as { error?: { data?: { field?: unknown } } }).error?.data?.field,
      };
    }
    for (const [path, a] of Object.entries(answers)) {
      expect(a.status, path).toBe(400);
      expect(a.field, path).toMatch(/^input\./);
    }
  });

  it('runs.start with an input nested 100,000 deep is a 400 naming input.input, not a JavaScript stack overflow', async () => {
    const before = await plane.db.prisma.flowRun.count();
    const a = await post(
      'runs.start',
      `{"flowName":"demo.reservation","input":{"orderId":"${randomUUID()}","x":${deep}}}`,
    );
    const body = JSON.parse(a.text) as { error?: { message?: string; data?: { field?: unknown } } };
    expect({ status: a.status, field: body.error?.data?.field, message: body.error?.message }).toEqual({
      status: 400,
      field: expect.stringMatching(/^input\.input/) as string,
      message: expect.not.stringMatching(/Maximum call stack|RangeError/) as string,
    });
    expect(await plane.db.prisma.flowRun.count()).toBe(before);
  });

  it('a query whose URL input is deep is a 4xx', async () => {
    const answer = await rawCall(plane.url, 'runs.list', { cookie, input: JSON.parse(deepText(2_000)) as unknown });
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
  });
});
