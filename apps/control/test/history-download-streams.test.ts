import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { wholeDocument } from './support/history-downloads.ts';
import { createTestOperator, signInCookie, testDatabaseUrl } from './support/test-plane.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

/**
 * ADR 0115: the history download is streamed in keyset pages (more rows than a page here in every
 * long section), and its bytes are what one JSON.stringify of the whole document wrote before, key
 * for key and space for space; a HEAD answers the headers alone; a client that leaves mid-download
 * leaves the server serving the next one.
 */
describe('the history download streams the same document, page by page', () => {
  let plane: ControlPlane;
  let cookie = '';
  let runId = '';
  let instanceId = '';
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({ DATABASE_URL: await testDatabaseUrl('history_stream'), CONTROL_PORT: '0', LOG_LEVEL: 'silent' }),
    );
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));
    const q = plane.db.driver.query.bind(plane.db.driver);
    runId = (
      await q<{ id: string }>(
        `insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, output, started_at, finished_at)
         values ('stream.flow', 1, 'Completed', '{"a": [1, "x\\ny"]}'::jsonb, '{"done": true}'::jsonb, now(), now())
         returning id::text as id`,
      )
    )[0]!.id;
    await q(
      `insert into "sagaflow"."action_runs" (run_id, sequence, name, status, input, output)
       select $1::uuid, g, 'step-' || g, 'Completed', jsonb_build_object('n', g), '"ok"'::jsonb from generate_series(1, 450) g`,
      [runId],
    );
    await q(
      `insert into "sagaflow"."flow_events" (run_id, type, sequence, data)
       select $1::uuid, 'step.completed', g, jsonb_build_object('text', 'line ' || g || E'\\n"quoted"')
         from generate_series(1, 650) g`,
      [runId],
    );
    await q(
      `insert into "sagaflow"."compensation_runs" (run_id, action_sequence, rollback_level, ordinal, name, status, input)
       select $1::uuid, g, g % 3, g, 'undo-' || g, 'Completed', '{}'::jsonb from generate_series(1, 205) g`,
      [runId],
    );
    await q(
      `insert into "sagaflow"."signals" (run_id, name, payload) values ($1::uuid, 'confirm', '{"ok": 1}'::jsonb)`,
      [runId],
    );
    await q(
      `insert into "sagaflow"."flow_runs" (flow_name, flow_version, input, parent_run_id, parent_sequence)
       select 'stream.child', 1, '{}'::jsonb, $1::uuid, g % 7 from generate_series(1, 230) g`,
      [runId],
    );
    await q(
      `insert into "sagaflow"."anomaly_log" (code, run_id, message, at)
       select 'claim_lost', $1::uuid, 'a' || g, '2026-01-01T00:00:00Z'::timestamptz + (g / 10) * interval '1 ms'
         from generate_series(1, 230) g`,
      [runId],
    );
    await q(
      `insert into "sagaflow"."repair_commands" (at, actor, command, target_type, target_id, expected, actual, result,
                                                 reason, idempotency_key, status)
       select '2026-01-01T00:00:00Z'::timestamptz + (g / 20) * interval '1 ms', 'ops', 'run.kick',
              case when g % 2 = 0 then 'run' else 'step' end,
              case when g % 2 = 0 then $1 else $1 || '#' || g end,
              '{}'::jsonb, '{}'::jsonb, '{}'::jsonb, 'why', 'stream-' || g, 'applied'
         from generate_series(1, 210) g`,
      [runId],
    );
    instanceId = (
      await q<{ id: string }>(
        `insert into "sagaflow"."saga_instances" (process_name, correlation_key, status, current_state, state, completed_at)
         values ('stream.proc', 'k', 'COMPLETED', 'Done', '{"s": 1}'::jsonb, now()) returning id::text as id`,
      )
    )[0]!.id;
    await q(
      `insert into "sagaflow"."process_transitions" (instance_id, process_name, from_state, to_state, message_id, message_type, detail)
       select $1::uuid, 'stream.proc', 'Open', 'Open', 'm-' || g, 'Tick', jsonb_build_object('g', g) from generate_series(1, 430) g`,
      [instanceId],
    );
    await q(
      `insert into "sagaflow"."process_timeouts" (instance_id, name, expected_state, armed_visit, due_at, created_at)
       select $1::uuid, 't' || g, 'Open', 1, now(), '2026-01-01T00:00:00Z'::timestamptz + (g / 50) * interval '1 ms'
         from generate_series(1, 220) g`,
      [instanceId],
    );
    await q(
      // Published already, so the plane's outbox publisher leaves them as they are while the test reads.
      `insert into "sagaflow"."outbox" (message_id, source_kind, source_id, type, destination, payload, status, published_at)
       select 'stream-' || g, 'process', $1, 'Ship', 'q', '{}'::jsonb, 'Published', now() from generate_series(1, 205) g`,
      [instanceId],
    );
    await q(
      `insert into "sagaflow"."inbox" (consumer, message_id, message_type, instance_id, received_at)
       select 'c' || (g % 3), 'm-' || g, 'Tick', $1::uuid, '2026-01-01T00:00:00Z'::timestamptz + (g / 40) * interval '1 ms'
         from generate_series(1, 240) g`,
      [instanceId],
    );
    await q(
      `insert into "sagaflow"."repair_commands" (at, actor, command, target_type, target_id, expected, actual, result,
                                                 reason, idempotency_key, status)
       select '2026-01-01T00:00:00Z'::timestamptz + (row_number() over (order by o.seq) / 30) * interval '1 ms', 'ops',
              'outbox.requeue', 'outbox', o.id::text, '{}'::jsonb, '{}'::jsonb, '{}'::jsonb, 'why', 'stream-o-' || o.seq, 'applied'
         from "sagaflow"."outbox" o where o.source_id = $1
       union all
       select now(), 'ops', 'instance.release', 'instance', $1, '{}'::jsonb, '{}'::jsonb, '{}'::jsonb, 'why', 'stream-i', 'applied'`,
      [instanceId],
    );
  }, 120_000);
  afterAll(async () => {
    await plane?.stop();
  });

  const get = (path: string, init: RequestInit = {}) => fetch(`${plane.url}${path}`, { ...init, headers: { cookie } });

  it("a run's download is, byte for byte, the whole document stringified at once", async () => {
    const res = await get(`/history/runs/${runId.toUpperCase()}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="run-${runId}.json"`);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const text = await res.text();
    const p = plane.db.prisma;
    const expected = wholeDocument({
      exportedAt: new Date((JSON.parse(text) as { exportedAt: string }).exportedAt),
      kind: 'run',
      run: await p.flowRun.findUnique({ where: { id: runId } }),
      steps: await p.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } }),
      compensations: await p.compensationRun.findMany({
        where: { run_id: runId },
        orderBy: [{ rollback_level: 'asc' }, { ordinal: 'asc' }],
      }),
      events: await p.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } }),
      signals: await p.signal.findMany({ where: { run_id: runId }, orderBy: { seq: 'asc' } }),
      timers: [],
      anomalies: await p.anomalyLog.findMany({ where: { run_id: runId }, orderBy: [{ at: 'asc' }, { id: 'asc' }] }),
      repairs: await p.repairCommand.findMany({
        where: { OR: [{ target_id: runId }, { target_id: { startsWith: `${runId}#` } }] },
        orderBy: [{ at: 'asc' }, { id: 'asc' }],
      }),
      outbox: [],
      childRunIds: (
        await p.flowRun.findMany({
          where: { parent_run_id: runId },
          orderBy: [{ parent_sequence: 'asc' }, { id: 'asc' }],
        })
      ).map((c) => c.id),
    });
    expect(text.length).toBe(expected.length);
    expect(text === expected).toBe(true);
  });

  it("an instance's download is, byte for byte, the whole document stringified at once; HEAD sends the headers alone", async () => {
    const res = await get(`/history/instances/${instanceId}`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const p = plane.db.prisma;
    const outbox = await p.outboxMessage.findMany({
      where: { source_kind: 'process', source_id: instanceId },
      orderBy: { seq: 'asc' },
    });
    const expected = wholeDocument({
      exportedAt: new Date((JSON.parse(text) as { exportedAt: string }).exportedAt),
      kind: 'instance',
      instance: await p.sagaInstance.findUnique({ where: { id: instanceId } }),
      transitions: await p.processTransition.findMany({ where: { instance_id: instanceId }, orderBy: { id: 'asc' } }),
      timeouts: await p.processTimeout.findMany({
        where: { instance_id: instanceId },
        orderBy: [{ created_at: 'asc' }, { id: 'asc' }],
      }),
      outbox,
      inbox: await p.inboxMessage.findMany({
        where: { instance_id: instanceId },
        orderBy: [{ received_at: 'asc' }, { consumer: 'asc' }, { message_id: 'asc' }],
      }),
      repairs: await p.repairCommand.findMany({
        where: {
          OR: [
            { target_type: 'instance', target_id: instanceId },
            { target_type: 'outbox', target_id: { in: outbox.map((o) => o.id) } },
          ],
        },
        orderBy: [{ at: 'asc' }, { id: 'asc' }],
      }),
    });
    expect((JSON.parse(text) as { repairs: unknown[] }).repairs).toHaveLength(206);
    expect(text.length).toBe(expected.length);
    expect(text === expected).toBe(true);

    const head = await get(`/history/instances/${instanceId}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-disposition')).toBe(`attachment; filename="instance-${instanceId}.json"`);
    expect(await head.text()).toBe('');
  });

  it('a client that leaves mid-download leaves the server serving the next downloads whole', async () => {
    const big = (
      await plane.db.driver.query<{ id: string }>(
        `insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input) values ('stream.big', 1, 'Completed', '{}'::jsonb)
         returning id::text as id`,
      )
    )[0]!.id;
    await plane.db.driver.query(
      `insert into "sagaflow"."flow_events" (run_id, type, sequence, data)
       select $1::uuid, 'step.completed', g, jsonb_build_object('blob', repeat('x', 4000)) from generate_series(1, 5000) g`,
      [big],
    );
    for (let i = 0; i < 12; i++) {
      const abort = new AbortController();
      const res = await get(`/history/runs/${big}`, { signal: abort.signal });
      expect(res.status).toBe(200);
      await res.body?.getReader().read();
      abort.abort();
    }
    // More abandoned downloads than the pool has connections: none is held by a download that stopped.
    const downloads = await Promise.all(
      [big, runId, randomUUID()].map(async (id) => (await get(`/history/runs/${id}`)).status),
    );
    expect(downloads).toEqual([200, 200, 404]);
    const res = await get(`/history/runs/${big}`);
    expect((JSON.parse(await res.text()) as { events: unknown[] }).events).toHaveLength(5000);
  }, 60_000);
});
