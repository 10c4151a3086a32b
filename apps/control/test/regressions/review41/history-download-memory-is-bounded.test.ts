import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { createTestOperator, signInCookie, testDatabaseUrl } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

const events = 30_000;
const blob = 2_000;
const mb = 1024 * 1024;

/** This process's peak resident memory since the last reset, in bytes (Linux /proc). */
function peakRss(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  if (!m?.[1]) throw new Error('no VmHWM in /proc/self/status');
  return Number(m[1]) * 1024;
}

/** Resets the peak to the current resident size (clear_refs 5, Linux >= 4.0). */
function resetPeakRss(): void {
  writeFileSync('/proc/self/clear_refs', '5');
}

/**
 * Review 41, ADR 0035 / 0044: a run page is bounded whatever the run's length, and the control plane
 * runs with its heap capped at 1 GB. The history download (`GET /history/runs/<id>`) reads the run's
 * whole history into memory (every step, event, ... as objects), then builds the whole JSON body as
 * one string before it writes a byte (history-route.ts: `toJson`, `content-length`). A run of 30,000
 * events of 2 KB (60 MB of data: a long-lived run, a chatty one) makes one download cost the control
 * plane several times that; a longer one a viewer can download takes the process past its heap cap
 * (or past V8's ~512 MB string limit, a 500 every time). A download a support ticket attaches is
 * expected to stream: the server's memory bounded by a page of rows, not by the run.
 */
describe('review 41: a history download holds a bounded amount of the control plane memory', () => {
  let plane: ControlPlane;
  let cookie = '';
  let runId = '';
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: await testDatabaseUrl('r41_download'),
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_MONITOR_INTERVAL_MS: '3600000',
      }),
    );
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));
    const [run] = await plane.db.driver.query<{ id: string }>(
      `insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, started_at, finished_at)
       values ('r41.long', 1, 'Completed', '{}'::jsonb, now(), now()) returning id::text as id`,
    );
    runId = run?.id ?? '';
    await plane.db.driver.query(
      `insert into "sagaflow"."flow_events" (run_id, type, sequence, data, at)
       select $1::uuid, 'step.completed', g, jsonb_build_object('blob', repeat(md5(g::text), $3::int / 32)), now()
         from generate_series(1, $2::int) g`,
      [runId, events, blob],
    );
  }, 120_000);
  afterAll(async () => {
    await plane?.stop();
  });

  it('a 30,000-event run downloads whole while the server holds well under the size of its history', async () => {
    globalThis.gc?.();
    const before = process.memoryUsage().rss;
    resetPeakRss();
    const res = await fetch(`${plane.url}/history/runs/${runId}`, { headers: { cookie } });
    expect(res.status).toBe(200);
    // Read the body as it comes and keep none of it: what stays resident is the server's.
    let bytes = 0;
    const reader = res.body?.getReader();
    for (;;) {
      const chunk = await reader?.read();
      if (!chunk || chunk.done) break;
      bytes += (chunk.value as Uint8Array).byteLength;
    }
    const grew = peakRss() - before;
    expect(bytes).toBeGreaterThan(events * blob);
    // A streamed download holds a page of rows at a time; 64 MB is generous for that.
    expect(
      Math.round(grew / mb),
      `peak RSS grew by ${Math.round(grew / mb)} MB for a ${Math.round(bytes / mb)} MB download`,
    ).toBeLessThan(64);
  }, 120_000);
});
