import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { createTestOperator, signInCookie, testDatabaseUrl } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

/**
 * Review 55 (ADR 0130). The console sends its reads batched (`httpBatchLink`, `?batch=1`). While every
 * pooled connection is taken, a batch of two reads must be answered as one read is: 503, Retry-After,
 * and each item saying the database gave no connection in time and nothing was done.
 */
describe('review 55: a batched read that gets no database connection in time (PostgreSQL)', () => {
  let plane: ControlPlane;
  let cookie = '';
  let held: { release(): void }[] = [];
  const release = () => {
    for (const c of held) c.release();
    held = [];
  };
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({ DATABASE_URL: await testDatabaseUrl('r55_batch'), CONTROL_PORT: '0', LOG_LEVEL: 'silent' }),
    );
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));
  });
  afterAll(async () => {
    release();
    await plane?.stop();
  });

  it('a batch of two reads is a 503 with Retry-After, each item saying nothing was done', async () => {
    const pool = plane.db.pool!;
    held = await Promise.all(Array.from({ length: pool.options.max }, () => pool.connect()));
    let res: Response;
    try {
      res = await fetch(
        `${plane.url}/trpc/runs.page,instances.page?batch=1&input=${encodeURIComponent(JSON.stringify({ 0: {}, 1: {} }))}`,
        { headers: { cookie } },
      );
    } finally {
      release();
    }
    const body = (await res.json()) as { error?: { message: string; data?: { httpStatus?: number } } }[];
    expect(
      {
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        items: body.map((b) => b.error?.message.replace(/ \(request id .*\)$/, '') ?? 'ok'),
      },
      JSON.stringify(body),
    ).toEqual({
      status: 503,
      retryAfter: '1',
      items: [
        'the database gave the control plane no connection in time (its connection pool is busy): nothing was done; try again in a moment',
        'the database gave the control plane no connection in time (its connection pool is busy): nothing was done; try again in a moment',
      ],
    });
  });
});
