import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { historyPlane, openPausedAt, readRest, wholeDocument } from '../../support/history-downloads.ts';
import { apiClient } from '../../support/test-plane.ts';
import type { ControlPlane } from '../../../src/start-control-plane.ts';

/**
 * Review 45, ADR 0115 §2, attacks that held: multi-byte text across the writer's chunks and the
 * HTTP chunks comes out byte for byte; ten downloads paused by slow clients hold no connection and
 * leave the API and another download served, and each finishes whole when its client reads on.
 */
describe('review 45 (held): the streamed history download', () => {
  let plane: ControlPlane;
  let cookie = '';
  let runId = '';
  beforeAll(async () => {
    const h = await historyPlane('r45_held_download');
    ({ plane, cookie } = h);
    const q = h.query;
    runId = (
      await q<{ id: string }>(
        `insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, output, started_at, finished_at)
         values ('r45.utf8', 1, 'Completed', '{"name": "Zoë 中文 😀"}'::jsonb, '{"ok": "✓"}'::jsonb, now(), now())
         returning id::text as id`,
      )
    )[0]!.id;
    // 400 events of ~16 KB of 2-, 3- and 4-byte characters (and an odd-length prefix so rows do not
    // align with any power of two): the writer's 48 K-character chunks and the socket's writes cut
    // everywhere in between.
    await q(
      `insert into "sagaflow"."flow_events" (run_id, type, sequence, data)
       select $1::uuid, 'step.completed', g,
              jsonb_build_object('text', repeat('a', g % 7) || repeat('é中😀', 1300 + g % 13), 'n', g)
         from generate_series(1, 400) g`,
      [runId],
    );
  }, 120_000);
  afterAll(async () => {
    await plane?.stop();
  });

  it('multi-byte text comes out byte for byte as one JSON.stringify of the whole, read slowly', async () => {
    const { res, chunks } = await openPausedAt(`${plane.url}/history/runs/${runId}`, cookie, '"events": [');
    const { body } = await readRest(res, chunks);
    expect(body).not.toContain('\uFFFD');
    const p = plane.db.prisma;
    const expected = wholeDocument({
      exportedAt: new Date((JSON.parse(body) as { exportedAt: string }).exportedAt),
      kind: 'run',
      run: await p.flowRun.findUnique({ where: { id: runId } }),
      steps: [],
      compensations: [],
      events: await p.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } }),
      signals: [],
      timers: [],
      anomalies: [],
      repairs: [],
      outbox: [],
      childRunIds: [],
    });
    expect(Buffer.byteLength(body)).toBe(Buffer.byteLength(expected));
    expect(body === expected).toBe(true);
  }, 60_000);

  it('ten downloads paused by their clients hold no connection; the API and another download are served meanwhile', async () => {
    // A run of ~16 MB of events: far more than the loopback buffers hold while a client does not read,
    // so each paused download's server side is waiting on its client, mid-body.
    const q = plane.db.driver.query.bind(plane.db.driver);
    const bigId = (
      await q<{ id: string }>(
        `insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, started_at, finished_at)
         values ('r45.slow', 1, 'Completed', '{}'::jsonb, now(), now()) returning id::text as id`,
      )
    )[0]!.id;
    await q(
      `insert into "sagaflow"."flow_events" (run_id, type, sequence, data)
       select $1::uuid, 'step.completed', g, jsonb_build_object('blob', repeat(md5(g::text), 400)) from generate_series(1, 1200) g`,
      [bigId],
    );
    const path = `/history/runs/${bigId}`;
    const paused = await Promise.all(
      Array.from({ length: 10 }, () => openPausedAt(`${plane.url}${path}`, cookie, '"events": [\n    {')),
    );
    // No session of the plane's pools is inside a statement or a transaction for them: one held by a
    // paused download began before they all paused and is still open a second later, where another
    // transaction of the plane (its monitor, a worker) caught between two statements is gone by then.
    const marker = (await plane.db.driver.query<{ marker: string }>(`select clock_timestamp()::text as marker`))[0]!
      .marker;
    await new Promise((r) => setTimeout(r, 1000));
    const busy = await plane.db.driver.query<{ state: string; query: string }>(
      `select state, query from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid()
          and state in ('active', 'idle in transaction', 'idle in transaction (aborted)')
          and backend_type = 'client backend'
          and coalesce(xact_start, query_start) < $1::timestamptz`,
      [marker],
    );
    expect(
      busy.filter((b) => /action_runs|flow_events|flow_runs|BEGIN/i.test(b.query) && b.state !== 'active'),
    ).toEqual([]);
    expect(busy.filter((b) => b.state.startsWith('idle in transaction'))).toEqual([]);

    const page = await apiClient(plane.url, cookie).runs.page.query({ limit: 5 });
    expect(page.items.map((r) => r.id)).toContain(bigId);
    const another = await fetch(`${plane.url}/history/runs/${runId}`, { headers: { cookie } });
    expect((JSON.parse(await another.text()) as { events: unknown[] }).events).toHaveLength(400);

    for (const { res, chunks } of paused) {
      const { body } = await readRest(res, chunks);
      expect((JSON.parse(body) as { events: unknown[] }).events).toHaveLength(1200);
    }
  }, 90_000);
});
