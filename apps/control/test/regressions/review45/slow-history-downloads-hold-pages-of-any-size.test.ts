import { request, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { controlProcess } from '../../support/control-process.ts';
import { createTestOperator, signInCookie, testDatabaseUrl } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

/**
 * GET `path`, paused (the client reads no further) once `seen` has arrived; with the chunks received
 * so far (fix45: the test first dropped them, so no body could parse).
 */
function openPausedAt(url: string, path: string, cookie: string, seen: string) {
  return new Promise<{ res: IncomingMessage; chunks: Buffer[] }>((resolve, reject) => {
    const req = request(`${url}${path}`, { headers: { cookie } }, (res) => {
      let text = '';
      const chunks: Buffer[] = [];
      const onData = (b: Buffer) => {
        chunks.push(b);
        if (text.length < 200_000) text += b.toString('latin1');
        if (text.includes(seen)) {
          res.pause();
          res.off('data', onData);
          resolve({ res, chunks });
        }
      };
      res.on('data', onData);
      res.on('error', reject);
      res.on('close', () => reject(new Error('the download ended before it was paused')));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Reads the rest of a paused response; the number of steps in the document, or -1 if it is not JSON. */
function stepsRead({ res, chunks }: { res: IncomingMessage; chunks: Buffer[] }) {
  return new Promise<number>((resolve) => {
    res.on('data', (b: Buffer) => chunks.push(b));
    res.on('error', () => undefined);
    res.on('close', () => {
      try {
        resolve(
          (
            JSON.parse(
              Buffer.concat(chunks)
                .toString('utf8')
                .replace(/^[^{]*/, ''),
            ) as { steps: unknown[] }
          ).steps.length,
        );
      } catch {
        resolve(-1);
      }
    });
    res.resume();
  });
}

/**
 * Review 45, ADR 0115 §2: "the server holds a page of rows whatever the history's length". The page
 * is 50 rows, whatever their size: an action's output may be 1 MB (`limits.action_output_bytes`), so
 * a download waiting on a slow client holds ~50 MB of the page it is writing, and the pages of several
 * slow downloads add up. Twenty viewers (or one viewer's twenty slow requests) reading a run of 100
 * steps of 1 MB outputs take a control plane capped at 1 GB (ADR 0044) past its heap.
 */
describe('review 45: slow history downloads of large rows', () => {
  let plane: ControlPlane;
  let databaseUrl = '';
  let cookie = '';
  let runId = '';
  beforeAll(async () => {
    databaseUrl = await testDatabaseUrl('r45_slow_pages');
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: databaseUrl,
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_MONITOR_INTERVAL_MS: '3600000',
      }),
    );
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));
    const q = plane.db.driver.query.bind(plane.db.driver);
    runId = (
      await q<{ id: string }>(
        `insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, started_at, finished_at)
         values ('r45.big', 1, 'Completed', '{}'::jsonb, now(), now()) returning id::text as id`,
      )
    )[0]!.id;
    // Each output is under the default 1 MB limit of an action's output (compact JSON).
    await q(
      `insert into "sagaflow"."action_runs" (run_id, sequence, name, status, input, output)
       select $1::uuid, g, 'step-' || g, 'Completed', '{}'::jsonb,
              jsonb_build_object('blob', repeat(md5(g::text), 31250)) from generate_series(1, 100) g`,
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
        Array.from({ length: 20 }, () => openPausedAt(url, path, cookie, '"steps": [\n    {')),
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
      const paused = settled.map(
        (s) => (s as PromiseFulfilledResult<{ res: IncomingMessage; chunks: Buffer[] }>).value,
      );
      // Every download has its first page in hand and is waiting for its client; now all read on.
      const counts = await Promise.all(paused.map(stepsRead));
      expect(server.child.exitCode).toBeNull();
      expect(counts).toEqual(Array.from({ length: 20 }, () => 100));
    } finally {
      await server.stop();
    }
  }, 240_000);
});
