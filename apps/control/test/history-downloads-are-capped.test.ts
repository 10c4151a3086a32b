import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { historyPlane, openPaused, readRest, type HistoryPlane } from './support/history-downloads.ts';
import type { ControlPlane } from '../src/start-control-plane.ts';

/**
 * ADR 0115 (review 45): a control plane streams at most SAGAFLOW_HISTORY_DOWNLOADS_MAX history
 * downloads at once. Another is a 503 with Retry-After and a message naming the setting; once one
 * ends, the next is served whole.
 */
/** A Completed run of 40 steps of ~400 KB (~16 MB: more than the loopback buffers hold while a client does not read); its id. */
async function stepsOf16Mb(h: HistoryPlane, flowName: string): Promise<string> {
  const id = await h.completedRun(flowName);
  await h.query(
    `insert into "sagaflow"."action_runs" (run_id, sequence, name, status, input, output)
     select $1::uuid, g, 'step-' || g, 'Completed', '{}'::jsonb, jsonb_build_object('blob', repeat(md5(g::text), 12500))
       from generate_series(1, 40) g`,
    [id],
  );
  return id;
}

describe('history downloads are capped per control plane', () => {
  let plane: ControlPlane;
  let cookie = '';
  let runId = '';
  beforeAll(async () => {
    const h = await historyPlane('history_cap', { SAGAFLOW_HISTORY_DOWNLOADS_MAX: '2' });
    ({ plane, cookie } = h);
    runId = await stepsOf16Mb(h, 'cap.flow');
  }, 120_000);
  afterAll(async () => {
    await plane?.stop();
  });

  it('answers a third download 503 with Retry-After while two stream, and serves the next once one ends', async () => {
    const path = `/history/runs/${runId}`;
    const first = await openPaused(`${plane.url}${path}`, cookie);
    const second = await openPaused(`${plane.url}${path}`, cookie);
    expect([first.statusCode, second.statusCode]).toEqual([200, 200]);

    const third = await openPaused(`${plane.url}${path}`, cookie);
    expect(third.statusCode).toBe(503);
    expect(third.headers['retry-after']).toMatch(/^\d+$/);
    expect(JSON.parse((await readRest(third)).body)).toEqual({
      error: expect.stringContaining('SAGAFLOW_HISTORY_DOWNLOADS_MAX') as unknown,
    });

    const whole = JSON.parse((await readRest(first)).body) as { steps: unknown[] };
    expect(whole.steps).toHaveLength(40);
    const fourth = await openPaused(`${plane.url}${path}`, cookie);
    expect(fourth.statusCode).toBe(200);
    const [a, b] = await Promise.all([readRest(second), readRest(fourth)]);
    expect((JSON.parse(a.body) as { steps: unknown[] }).steps).toHaveLength(40);
    expect((JSON.parse(b.body) as { steps: unknown[] }).steps).toHaveLength(40);
  }, 120_000);

  it('a client that reads nothing past the stall limit is cut off, and its slot serves the next download', async () => {
    const h = await historyPlane('history_stall', {
      SAGAFLOW_HISTORY_DOWNLOADS_MAX: '1',
      SAGAFLOW_HISTORY_DOWNLOAD_STALL_SECONDS: '1',
    });
    const { plane: stalling, cookie: viewer } = h;
    try {
      const id = await stepsOf16Mb(h, 'stall.flow');
      const path = `/history/runs/${id}`;
      // The only slot, taken by a client that never reads: the server closes it once the limit passes.
      const stalled = await openPaused(`${stalling.url}${path}`, viewer);
      expect(stalled.statusCode).toBe(200);
      // Until the server gives the slot up, each next download is a 503 (the paused client sees no
      // close while it reads nothing: ask again until one is served).
      let next = await openPaused(`${stalling.url}${path}`, viewer);
      for (let i = 0; next.statusCode === 503 && i < 300; i++) {
        await readRest(next);
        await new Promise((r) => setTimeout(r, 100));
        next = await openPaused(`${stalling.url}${path}`, viewer);
      }
      expect(next.statusCode).toBe(200);
      stalled.destroy();
      expect((JSON.parse((await readRest(next)).body) as { steps: unknown[] }).steps).toHaveLength(40);
    } finally {
      await stalling.stop();
    }
  }, 120_000);
});
