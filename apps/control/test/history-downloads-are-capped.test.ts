import { request, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { createTestOperator, signInCookie, testDatabaseUrl } from './support/test-plane.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

/** GET `path`; the response once its headers are in, the client reading nothing of the body yet. */
function open(url: string, path: string, cookie: string) {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(`${url}${path}`, { headers: { cookie } }, (res) => {
      res.pause();
      resolve(res);
    });
    req.on('error', reject);
    req.end();
  });
}

function readAll(res: IncomingMessage) {
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (b: Buffer) => chunks.push(b));
    res.on('error', reject);
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.resume();
  });
}

/**
 * ADR 0115 (review 45): a control plane streams at most SAGAFLOW_HISTORY_DOWNLOADS_MAX history
 * downloads at once. Another is a 503 with Retry-After and a message naming the setting; once one
 * ends, the next is served whole.
 */
describe('history downloads are capped per control plane', () => {
  let plane: ControlPlane;
  let cookie = '';
  let runId = '';
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: await testDatabaseUrl('history_cap'),
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_HISTORY_DOWNLOADS_MAX: '2',
      }),
    );
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));
    const q = plane.db.driver.query.bind(plane.db.driver);
    runId = (
      await q<{ id: string }>(
        `insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, started_at, finished_at)
         values ('cap.flow', 1, 'Completed', '{}'::jsonb, now(), now()) returning id::text as id`,
      )
    )[0]!.id;
    // ~16 MB of steps: more than the loopback buffers hold while a client does not read.
    await q(
      `insert into "sagaflow"."action_runs" (run_id, sequence, name, status, input, output)
       select $1::uuid, g, 'step-' || g, 'Completed', '{}'::jsonb, jsonb_build_object('blob', repeat(md5(g::text), 12500))
         from generate_series(1, 40) g`,
      [runId],
    );
  }, 120_000);
  afterAll(async () => {
    await plane?.stop();
  });

  it('answers a third download 503 with Retry-After while two stream, and serves the next once one ends', async () => {
    const path = `/history/runs/${runId}`;
    const first = await open(plane.url, path, cookie);
    const second = await open(plane.url, path, cookie);
    expect([first.statusCode, second.statusCode]).toEqual([200, 200]);

    const third = await open(plane.url, path, cookie);
    expect(third.statusCode).toBe(503);
    expect(third.headers['retry-after']).toMatch(/^\d+$/);
    expect(JSON.parse(await readAll(third))).toEqual({
      error: expect.stringContaining('SAGAFLOW_HISTORY_DOWNLOADS_MAX') as unknown,
    });

    const whole = JSON.parse(await readAll(first)) as { steps: unknown[] };
    expect(whole.steps).toHaveLength(40);
    const fourth = await open(plane.url, path, cookie);
    expect(fourth.statusCode).toBe(200);
    const [a, b] = await Promise.all([readAll(second), readAll(fourth)]);
    expect((JSON.parse(a) as { steps: unknown[] }).steps).toHaveLength(40);
    expect((JSON.parse(b) as { steps: unknown[] }).steps).toHaveLength(40);
  }, 120_000);

  it('a client that reads nothing past the stall limit is cut off, and its slot serves the next download', async () => {
    const stalling = await startControlPlane(
      parseEnv({
        DATABASE_URL: await testDatabaseUrl('history_stall'),
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_HISTORY_DOWNLOADS_MAX: '1',
        SAGAFLOW_HISTORY_DOWNLOAD_STALL_SECONDS: '1',
      }),
    );
    try {
      const viewer = await signInCookie(stalling.url, await createTestOperator(stalling, 'viewer'));
      const q = stalling.db.driver.query.bind(stalling.db.driver);
      const id = (
        await q<{ id: string }>(
          `insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, started_at, finished_at)
           values ('stall.flow', 1, 'Completed', '{}'::jsonb, now(), now()) returning id::text as id`,
        )
      )[0]!.id;
      await q(
        `insert into "sagaflow"."action_runs" (run_id, sequence, name, status, input, output)
         select $1::uuid, g, 'step-' || g, 'Completed', '{}'::jsonb, jsonb_build_object('blob', repeat(md5(g::text), 12500))
           from generate_series(1, 40) g`,
        [id],
      );
      const path = `/history/runs/${id}`;
      // The only slot, taken by a client that never reads: the server closes it once the limit passes.
      const stalled = await open(stalling.url, path, viewer);
      expect(stalled.statusCode).toBe(200);
      // Until the server gives the slot up, each next download is a 503 (the paused client sees no
      // close while it reads nothing: ask again until one is served).
      let next = await open(stalling.url, path, viewer);
      for (let i = 0; next.statusCode === 503 && i < 300; i++) {
        await readAll(next);
        await new Promise((r) => setTimeout(r, 100));
        next = await open(stalling.url, path, viewer);
      }
      expect(next.statusCode).toBe(200);
      stalled.destroy();
      expect((JSON.parse(await readAll(next)) as { steps: unknown[] }).steps).toHaveLength(40);
    } finally {
      await stalling.stop();
    }
  }, 120_000);
});
