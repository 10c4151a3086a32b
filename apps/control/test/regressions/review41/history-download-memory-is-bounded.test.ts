import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { controlProcess, type ControlProcess } from '../../support/control-process.ts';
import { historyPlane } from '../../support/history-downloads.ts';
import type { ControlPlane } from '../../../src/start-control-plane.ts';

const events = 30_000;
const blob = 2_000;
const mb = 1024 * 1024;

/** A process's resident memory now (VmRSS) or at its peak since the last reset (VmHWM), in bytes (Linux /proc). */
function rss(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m?.[1]) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(m[1]) * 1024;
}

/** Resets a process's peak to its current resident size (clear_refs 5, Linux >= 4.0). */
function resetPeakRss(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
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
  let databaseUrl = '';
  let cookie = '';
  let runId = '';
  let instanceId = '';
  beforeAll(async () => {
    // The plane in this process seeds and makes the operator; a plane of its own serves the downloads.
    const h = await historyPlane('r41_download');
    ({ plane, databaseUrl, cookie } = h);
    runId = await h.completedRun('r41.long');
    await plane.db.driver.query(
      `insert into "sagaflow"."flow_events" (run_id, type, sequence, data, at)
       select $1::uuid, 'step.completed', g, jsonb_build_object('blob', repeat(md5(g::text), $3::int / 32)), now()
         from generate_series(1, $2::int) g`,
      [runId, events, blob],
    );
    const [instance] = await plane.db.driver.query<{ id: string }>(
      `insert into "sagaflow"."saga_instances" (process_name, correlation_key, status, current_state, completed_at)
       values ('r41.long', 'r41-long', 'COMPLETED', 'Done', now()) returning id::text as id`,
    );
    instanceId = instance?.id ?? '';
    await plane.db.driver.query(
      `insert into "sagaflow"."process_transitions" (instance_id, process_name, from_state, to_state, message_id,
                                                    message_type, detail, at)
       select $1::uuid, 'r41.long', 'Open', 'Open', 'm-' || g, 'Tick',
              jsonb_build_object('blob', repeat(md5(g::text), $3::int / 32)), now()
         from generate_series(1, $2::int) g`,
      [instanceId, events, blob],
    );
  }, 180_000);
  afterAll(async () => {
    await plane?.stop();
  });

  /**
   * Downloads `path` twice from a control plane process of its own (a fresh one each time, so one
   * test's retained heap does not hide the next's), keeping none of the body: the bytes received and
   * how far the server's peak RSS rose above what it held before the second request.
   */
  async function download(path: string): Promise<{ bytes: number; grewMb: number }> {
    // The heap cap the product runs with (ADR 0044).
    const server = controlProcess(
      { DATABASE_URL: databaseUrl, CONTROL_PORT: '0', SAGAFLOW_MONITOR_INTERVAL_MS: '3600000' },
      ['--max-old-space-size=1024'],
    );
    try {
      const url = await server.listening;
      // The first request of a fresh process also pays its start-up once (code compiled, the ORM's
      // first queries, the heap grown): measured that way a streamed download rose 21-93 MB. The
      // second download of the same history is what each download costs a process that serves them.
      await measuredDownload(server, url, path);
      return await measuredDownload(server, url, path);
    } finally {
      await server.stop();
    }
  }

  async function measuredDownload(server: ControlProcess, url: string, path: string) {
    const pid = server.child.pid ?? 0;
    const before = rss(pid, 'VmRSS');
    resetPeakRss(pid);
    const res = await fetch(`${url}${path}`, { headers: { cookie } });
    expect(res.status).toBe(200);
    // Read the body as it comes and keep none of it.
    let bytes = 0;
    const reader = res.body?.getReader();
    for (;;) {
      const chunk = await reader?.read();
      if (!chunk || chunk.done) break;
      bytes += (chunk.value as Uint8Array).byteLength;
    }
    return { bytes, grewMb: Math.round((rss(pid, 'VmHWM') - before) / mb) };
  }

  it('a 30,000-event run downloads whole while the server holds well under the size of its history', async () => {
    const { bytes, grewMb } = await download(`/history/runs/${runId}`);
    expect(bytes).toBeGreaterThan(events * blob);
    // A streamed download holds a page of rows at a time; 64 MB is generous for that.
    expect(grewMb, `peak RSS grew by ${grewMb} MB for a ${Math.round(bytes / mb)} MB download`).toBeLessThan(64);
  }, 120_000);

  it('a 30,000-transition instance downloads whole while the server holds well under the size of its history', async () => {
    const { bytes, grewMb } = await download(`/history/instances/${instanceId}`);
    expect(bytes).toBeGreaterThan(events * blob);
    expect(grewMb, `peak RSS grew by ${grewMb} MB for a ${Math.round(bytes / mb)} MB download`).toBeLessThan(64);
  }, 120_000);
});
