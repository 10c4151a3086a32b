import { createEngine, defineProcess } from '@sagaflow/engine';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import '../../provided-context.ts';
import { parsePrometheus } from '../../support/parse-prometheus.ts';
import { runCli as cli } from '../../support/run-cli.ts';
import { apiClient, createTestOperator, signInCookie, testDatabaseUrl } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

/**
 * Review 51. A process instance whose timeout handler throws every time stays ACTIVE with no failure
 * record (ADR 0008: a failing timeout records nothing on the instance), its timer Pending with
 * `attempts`, `last_error` and `retry_at`. Only the instance page (instances.get's pending work)
 * shows that. On-call starts from the list (API, CLI) or from /metrics: the instance must be findable
 * there, with its reason, without knowing its id.
 */
const boom = 'r51 carrier api refused the escalation: 503 Service Unavailable';
const desk = defineProcess({
  name: 'r51-shipment',
  states: ['Open', 'Booking', 'Escalated', 'Done'],
  initial: 'Open',
  final: ['Escalated', 'Done'],
  data: z.object({ key: z.string() }),
  initialData: (key) => ({ key }),
  messages: { Book: z.object({ key: z.string() }) },
  correlate: (m) => m.payload.key,
  timeouts: { shipmentLate: { afterMs: 1, expects: 'Booking' } },
  on: {
    Book: [{ from: 'Open', to: 'Booking', schedule: ['shipmentLate'] }],
    shipmentLate: [
      {
        from: 'Booking',
        to: 'Escalated',
        then: () => {
          throw new Error(boom);
        },
      },
    ],
  },
});

const scrapeToken = 'review51-scrape-token-abcdef0123';

describe('review 51: an instance whose timeout keeps failing is found from the list, the CLI and /metrics (real HTTP, PostgreSQL)', () => {
  let plane: ControlPlane;
  let env: Record<string, string>;
  let cookie = '';
  let engine: ReturnType<typeof createEngine>;
  let failingId = '';
  let healthyId = '';
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: await testDatabaseUrl('review51_failing_timeout'),
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_METRICS_TOKEN: scrapeToken,
        SAGAFLOW_METRICS_RUN_COUNTS_MAX_AGE_MS: '0',
      }),
    );
    const admin = await signInCookie(plane.url, await createTestOperator(plane, 'admin'));
    cookie = admin;
    const { token } = await apiClient(plane.url, admin).tokens.create.mutate({ name: 'r51' });
    env = { SAGAFLOW_URL: plane.url, SAGAFLOW_TOKEN: token };
    engine = createEngine({
      db: plane.db,
      flows: [],
      actions: [],
      processes: [desk],
      logger: pino({ level: 'silent' }),
    });
    failingId = (
      await engine.processes.deliver(desk, { id: 'r51-book-1', type: 'Book', payload: { key: 'order-r51-1' } })
    ).instanceId!;
    // A second ACTIVE instance with nothing wrong, in the same state: a filter must tell them apart.
    healthyId = (
      await plane.db.driver.query<{ id: string }>(
        `insert into "sagaflow"."saga_instances" (process_name, correlation_key, current_state, state)
         values ('r51-shipment', 'order-r51-2', 'Booking', '{"key":"order-r51-2"}'::jsonb) returning id::text as id`,
      )
    )[0]!.id;
    // Wait for the 1 ms timer to be due by the database's clock, then fail it through the real pass.
    for (let i = 0; i < 200; i++) {
      const due = await plane.db.driver.query<{ n: number }>(
        `select count(*)::int as n from "sagaflow"."process_timeouts" where instance_id = $1::uuid and due_at <= now()`,
        [failingId],
      );
      if (due[0]!.n > 0) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    const pass = await engine.processes.sweepProcessTimeouts();
    expect(pass.failed).toBe(1);
  }, 120_000);
  afterAll(async () => {
    await plane?.stop();
  });

  it('the instance page shows the failing timer (the engine records it)', async () => {
    const d = await apiClient(plane.url, cookie).instances.get.query({ id: failingId });
    expect(JSON.stringify(d)).toContain(boom);
  });

  it('instances.page lists the instance with what it is failing on', async () => {
    const page = await apiClient(plane.url, cookie).instances.page.query({ processName: 'r51-shipment' });
    const item = page.items.find((i) => i.id === failingId);
    expect(item, 'the instance is listed').toBeDefined();
    expect(JSON.stringify(item), 'the list item names the failing timeout').toContain(boom);
  });

  it('instances.list (the stalled-instance check) names what the instance is failing on', async () => {
    const list = await apiClient(plane.url, cookie).instances.list.query({
      status: 'ACTIVE',
      processName: 'r51-shipment',
    });
    const item = list.find((i) => i.id === failingId);
    expect(item, 'the instance is listed').toBeDefined();
    expect(JSON.stringify(item), 'the list item names the failing timeout').toContain(boom);
  });

  it('the instances list can be filtered to the failing instances', async () => {
    const api = apiClient(plane.url, cookie);
    // No such filter exists: the input is strict. Any spelling of it would do; this one is the runs list's idiom.
    const answer = await api.instances.page
      .query({ processName: 'r51-shipment', failing: true } as never)
      .then((p) => ({ ids: p.items.map((i) => i.id) }))
      .catch((err: unknown) => ({ refused: err instanceof Error ? err.message : String(err) }));
    expect(answer).toEqual({ ids: [failingId] });
    expect(healthyId).not.toBe(failingId);
  });

  it('sagaflow instances list prints what the instance is failing on', async () => {
    const shown = await cli(['instances', 'list', '--process', 'r51-shipment'], env);
    expect(shown.code, shown.err).toBe(0);
    const line = shown.out.split('\n').find((l) => l.includes(failingId)) ?? '';
    expect(line, `instances list printed:\n${shown.out}`).not.toBe('');
    expect(line, `instances list printed:\n${shown.out}`).toMatch(/r51 carrier api refused|shipmentLate/);
  });

  it("the overview's headline counts the instance whose timeout keeps failing", async () => {
    const o = await apiClient(plane.url, cookie).overview.get.query();
    // Seen: { active: 2, quarantined: 0, byState: [{ state: 'Booking', active: 2, ... }] }: nothing tells
    // the failing instance from the healthy one.
    expect(JSON.stringify(o.instances), JSON.stringify(o.instances)).toMatch(/fail/i);
  });

  it('the anomaly log names the instance whose timeout keeps failing', async () => {
    const page = await apiClient(plane.url, cookie).anomalies.page.query({});
    // The journal's codes are run races and engine faults (seed 000); a process timeout failing is none of them.
    expect(JSON.stringify(page.items), `anomaly log: ${JSON.stringify(page.items).slice(0, 300)}`).toContain(failingId);
  });

  it('/metrics counts the instance whose timeout keeps failing', async () => {
    const res = await fetch(`${plane.url}/metrics`, { headers: { authorization: `Bearer ${scrapeToken}` } });
    const text = await res.text();
    expect(res.status, text.slice(0, 300)).toBe(200);
    const e = parsePrometheus(text);
    const failing = e.samples.filter(
      (s) => s.name.startsWith('sagaflow_') && /fail/.test(s.name) && /timeout|timer|instance|process/.test(s.name),
    );
    expect(
      failing.map((s) => `${s.name}${JSON.stringify(s.labels)} ${s.value}`),
      `sagaflow families: ${[...new Set(e.samples.filter((s) => s.name.startsWith('sagaflow_')).map((s) => s.name))].join(', ')}`,
    ).not.toEqual([]);
    expect(failing.reduce((n, s) => n + s.value, 0)).toBeGreaterThanOrEqual(1);
  });
});
