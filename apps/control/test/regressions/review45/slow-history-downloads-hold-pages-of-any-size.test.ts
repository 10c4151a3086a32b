import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { controlProcess } from '../../support/control-process.ts';
import {
  historyPlane,
  openPausedAt,
  parsedOrNull,
  readRest,
  type PausedDownload,
} from '../../support/history-downloads.ts';
import type { ControlPlane } from '../../../src/start-control-plane.ts';

/**
 * Review 45, ADR 0115 §2: "the server holds a page of rows whatever the history's length". The page
 * is 50 rows, whatever their size: an action's output may be 1 MB (`limits.action_output_bytes`), so
 * a download waiting on a slow client holds ~50 MB of the page it is writing, and the pages of several
 * slow downloads add up. Twenty viewers (or one viewer's twenty slow requests) reading a run of 51
 * steps of 1 MB outputs (one full page of 50 rows each, and one row on a page after it) take a control
 * plane capped at 1 GB (ADR 0044) past its heap: with pages cut by rows alone it died mid-way (seen
 * with the byte bound lifted), on the full first page each download holds while it waits; 51 steps
 * rather than 100 (then 60) keeps that and halves what the test reads.
 */
describe('review 45: slow history downloads of large rows', () => {
  let plane: ControlPlane;
  let databaseUrl = '';
  let cookie = '';
  let runId = '';
  beforeAll(async () => {
    const h = await historyPlane('r45_slow_pages');
    ({ plane, databaseUrl, cookie } = h);
    const q = h.query;
    runId = await h.completedRun('r45.big');
    // Each output is under the default 1 MB limit of an action's output (compact JSON).
    await q(
      `insert into "sagaflow"."action_runs" (run_id, sequence, name, status, input, output)
       select $1::uuid, g, 'step-' || g, 'Completed', '{}'::jsonb,
              jsonb_build_object('blob', repeat(md5(g::text), 31250)) from generate_series(1, 51) g`,
      [runId],
    );
  }, 180_000);
  afterAll(async () => {
    await plane?.stop();
  });

  it('twenty downloads paused by their clients leave the control plane serving them all to the end', async () => {
    // The heap cap the product runs with (ADR 0044).
    const server = controlProcess(
      { DATABASE_URL: databaseUrl, CONTROL_PORT: '0', SAGAFLOW_MONITOR_INTERVAL_MS: '3600000' },
      ['--max-old-space-size=1024'],
    );
    const exited = server.exited.then((e) => e.code);
    try {
      const url = await server.listening;
      const path = `/history/runs/${runId}`;
      const settled = await Promise.allSettled(
        Array.from({ length: 20 }, () => openPausedAt(`${url}${path}`, cookie, '"steps": [\n    {')),
      );
      const failed = settled.filter((s) => s.status === 'rejected');
      if (failed.length > 0) {
        // Diagnostics only: how the server ended, if it did (it is given a few seconds to be reaped).
        const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running'), 5000))]);
        const signal = server.child.signalCode;
        throw new Error(
          `${failed.length} of 20 downloads broke before their first page arrived; control plane exit ${String(code)} ${String(signal)}: ${server.stderr().match(/FATAL ERROR[^\n]*/)?.[0] ?? server.stderr().slice(-400)}`,
        );
      }
      const paused = settled.map((s) => (s as PromiseFulfilledResult<PausedDownload>).value);
      // Every download has its first page in hand and is waiting for its client; now all read on.
      const counts = await Promise.all(
        paused.map(async ({ res, chunks }) => parsedOrNull((await readRest(res, chunks)).body)?.steps?.length ?? -1),
      );
      expect(server.child.exitCode).toBeNull();
      expect(counts).toEqual(Array.from({ length: 20 }, () => 51));
    } finally {
      await server.stop();
    }
  }, 240_000);
});
