import { existsSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { anomalyCodes, createDatabase } from '@sagaflow/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { parsePrometheus, seriesOf, type Exposition } from './support/parse-prometheus.ts';
import { eventually, seedKnownSet, type KnownSet } from './support/seed-known-set.ts';
import { testDatabaseUrl } from './support/test-plane.ts';
import { parseEnv } from '../src/env.ts';
import { stepDurationBuckets } from '../src/metrics/reads/read-step-durations.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';
import { migratedDataDir } from './support/migrated-data-dir.ts';

const token = 'scrape-token-for-tests-0123456789';

async function scrape(url: string, bearer?: string): Promise<Exposition> {
  const res = await fetch(url, bearer ? { headers: { authorization: `Bearer ${bearer}` } } : {});
  expect(res.status, await res.clone().text()).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheus(await res.text());
}

const demoActions = ['demo.charge-card', 'demo.reserve-stock', 'demo.ship-order'];

/** Every figure the known set implies, exactly: no series more, none less. */
function expectKnownSet(e: Exposition, known: KnownSet): void {
  const elapsed = (Date.now() - known.t0) / 1000;
  expect(seriesOf(e, 'sagaflow_runs')).toEqual({
    'flow=demo.order,status=Completed': 3,
    [`flow=metrics.ghost,status=${known.ghostStatus}`]: 1,
  });
  expect(seriesOf(e, 'sagaflow_stuck_runs')).toEqual({ 'reason=unknown_flow': 1 });
  expect(seriesOf(e, 'sagaflow_anomalies_total')).toEqual(
    Object.fromEntries(
      anomalyCodes.map((code) => [`code=${code}`, { claim_lost: 2, outcome_rejected: 1 }[code as string] ?? 0]),
    ),
  );
  expect(seriesOf(e, 'sagaflow_process_instances')).toEqual({
    'process=metrics.proc,state=AwaitingPayment,status=ACTIVE': 2,
    'process=metrics.proc,state=Shipping,status=QUARANTINED': 1,
  });
  const oldest = seriesOf(e, 'sagaflow_process_oldest_seconds');
  expect(Object.keys(oldest).sort()).toEqual([
    'process=metrics.proc,state=AwaitingPayment,status=ACTIVE',
    'process=metrics.proc,state=Shipping,status=QUARANTINED',
  ]);
  // The stalest of the two AwaitingPayment instances (120 s), not the newer one (30 s).
  expect(oldest['process=metrics.proc,state=AwaitingPayment,status=ACTIVE']).toBeGreaterThanOrEqual(120);
  expect(oldest['process=metrics.proc,state=AwaitingPayment,status=ACTIVE']).toBeLessThanOrEqual(120 + elapsed + 1);
  expect(oldest['process=metrics.proc,state=Shipping,status=QUARANTINED']).toBeGreaterThanOrEqual(600);
  expect(seriesOf(e, 'sagaflow_process_transitions_total')).toEqual({
    'from=Start,process=metrics.proc,to=AwaitingPayment': 2,
    'from=AwaitingPayment,process=metrics.proc,to=Shipping': 1,
    'from=Shipping,process=metrics.proc,to=Shipping': 1,
  });
  expect(seriesOf(e, 'sagaflow_outbox_pending')).toEqual({ '': 1 });
  expect(seriesOf(e, 'sagaflow_outbox_dead')).toEqual({ '': 1 });
  expect(seriesOf(e, 'sagaflow_outbox_oldest_seconds')['']).toBeGreaterThanOrEqual(100);
  expect(seriesOf(e, 'sagaflow_outbox_oldest_seconds')['']).toBeLessThanOrEqual(100 + elapsed + 1);
  // Retention (ADR 0027): the demo runs finished during the seeding; nothing was published yet.
  const retention = seriesOf(e, 'sagaflow_retention_oldest_seconds');
  expect(Object.keys(retention).sort()).toEqual(['table=flow_runs', 'table=outbox']);
  expect(retention['table=flow_runs']).toBeGreaterThan(0);
  expect(retention['table=flow_runs']).toBeLessThanOrEqual(elapsed + 120);
  expect(retention['table=outbox']).toBe(0);
  expect(e.types.sagaflow_repairs_total).toBe('counter');
  expect(seriesOf(e, 'sagaflow_repairs_total')).toEqual({ 'command=run.kick,outcome=conflict': 1 });
  expect(e.types).toMatchObject({
    sagaflow_runs: 'gauge',
    sagaflow_anomalies_total: 'counter',
    sagaflow_process_transitions_total: 'counter',
    sagaflow_step_duration_seconds: 'histogram',
  });
}

/** The nine finished demo actions, once their window has settled; then exact, buckets cumulative. */
async function expectStepHistogram(scrapeNow: () => Promise<Exposition>): Promise<void> {
  const e = await eventually('the finished steps to settle into the histogram', async () => {
    const x = await scrapeNow();
    const total = Object.values(seriesOf(x, 'sagaflow_step_duration_seconds_count')).reduce((a, b) => a + b, 0);
    return total >= 9 ? x : undefined;
  });
  const counts = Object.fromEntries(demoActions.map((a) => [`action=${a},flow=demo.order`, 3]));
  expect(seriesOf(e, 'sagaflow_step_duration_seconds_count')).toEqual(counts);
  const buckets = e.samples.filter((s) => s.name === 'sagaflow_step_duration_seconds_bucket');
  for (const action of demoActions) {
    const mine = buckets.filter((s) => s.labels.action === action);
    expect(mine.map((s) => s.labels.le)).toEqual([...stepDurationBuckets.map(String), '+Inf']);
    const values = mine.map((s) => s.value);
    expect(values.at(-1)).toBe(3);
    for (let i = 1; i < values.length; i++) expect(values[i]).toBeGreaterThanOrEqual(values[i - 1] ?? 0);
  }
  // The next scrape adds only what finished since: nothing here, so nothing is counted twice.
  expect(seriesOf(await scrapeNow(), 'sagaflow_step_duration_seconds_count')).toEqual(counts);
}

describe('/metrics on PostgreSQL, behind the scrape token', () => {
  let plane: ControlPlane;
  let url: string;
  let known: KnownSet;
  const env = () =>
    parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent', SAGAFLOW_METRICS_TOKEN: token });
  beforeAll(async () => {
    url = await testDatabaseUrl('metrics');
    plane = await startControlPlane(env());
    known = await seedKnownSet(plane);
  });
  afterAll(async () => {
    await plane.stop();
  });

  it('a scrape without the token, or with a wrong one, is a 401 that names the setting; nothing is read', async () => {
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Bearer wrong-token-0123456789' },
      { authorization: `Bearer ${token}x` },
      { authorization: token },
    ];
    for (const headers of attempts) {
      const res = await fetch(`${plane.url}/metrics`, { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      const body = await res.text();
      expect(body).toContain('SAGAFLOW_METRICS_TOKEN');
      expect(body).not.toContain('sagaflow_runs');
    }
  });

  it('reports exactly the known runs, stuck runs, anomalies, instances, oldest ages, transitions and outbox', async () => {
    expectKnownSet(await scrape(`${plane.url}/metrics`, token), known);
  });

  it('the step-duration histogram counts each finished action once, in cumulative buckets', async () => {
    await expectStepHistogram(() => scrape(`${plane.url}/metrics`, token));
  });

  it("the sweeps' progress is shown once each has run a pass: rows handled, rows left, rate (ADR 0026)", async () => {
    const sweeps = ['expired_steps', 'expired_runs', 'process_timeouts', 'outbox'];
    const e = await eventually('the monitor, the timeout scheduler and the publisher to run a pass', async () => {
      const x = await scrape(`${plane.url}/metrics`, token);
      const left = seriesOf(x, 'sagaflow_sweep_rows_left');
      return sweeps.every((s) => `sweep=${s}` in left) ? x : undefined;
    });
    // Nothing is overdue or due in the known set: each pass drained what it found.
    for (const s of sweeps) expect(seriesOf(e, 'sagaflow_sweep_rows_left')[`sweep=${s}`]).toBe(0);
    expect(Object.keys(seriesOf(e, 'sagaflow_sweep_rows_total'))).toEqual(
      expect.arrayContaining(sweeps.map((s) => `sweep=${s}`)),
    );
    expect(e.types).toMatchObject({
      sagaflow_sweep_rows_total: 'counter',
      sagaflow_sweep_rows_left: 'gauge',
      sagaflow_sweep_rows_per_second: 'gauge',
    });
  });

  it('counters come from the tables: after a restart anomalies and transitions keep their totals', async () => {
    await plane.stop();
    plane = await startControlPlane(env());
    const e = await scrape(`${plane.url}/metrics`, token);
    expectKnownSet(e, known);
  });

  it('readyz is 200 with its checks while the database answers and the migrations are current', async () => {
    const res = await fetch(`${plane.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ready', checks: { started: true, database: 'ok' } });
  });
});

describe('/metrics on PGlite, on a listener of its own (SAGAFLOW_METRICS_ADDRESS, no token)', () => {
  let plane: ControlPlane;
  let known: KnownSet;
  beforeAll(async () => {
    const dataDir = await migratedDataDir('metrics');
    plane = await startControlPlane(
      parseEnv({
        SAGAFLOW_DATA_DIR: dataDir,
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_METRICS_ADDRESS: '127.0.0.1:0',
      }),
    );
    known = await seedKnownSet(plane);
  });
  afterAll(async () => {
    await plane.stop();
  });

  it('the metrics listener answers without a token; the API port does not serve them', async () => {
    expect(plane.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(plane.metricsUrl).not.toBe(`${plane.url}/metrics`);
    const onApi = await fetch(`${plane.url}/metrics`);
    expect(onApi.status).toBe(404);
    const body = await onApi.text();
    expect(body).toContain('SAGAFLOW_METRICS_ADDRESS');
    expect(body).not.toContain('sagaflow_runs');
  });

  it('reports exactly the known set, as on PostgreSQL', async () => {
    expectKnownSet(await scrape(plane.metricsUrl ?? ''), known);
  });

  it('the step-duration histogram counts each finished action once', async () => {
    await expectStepHistogram(() => scrape(plane.metricsUrl ?? ''));
  });

  it('readyz is 503 naming the migration the database lacks, and 200 again once it is recorded', async () => {
    const { prisma } = plane.db;
    const ready = await fetch(`${plane.url}/readyz`);
    expect(ready.status).toBe(200);
    const [last] = await prisma.$queryRaw<{ id: string; migration_name: string }[]>`
      select id, migration_name from "sagaflow"."_prisma_migrations" order by migration_name desc limit 1`;
    if (!last) throw new Error('no migration recorded');
    await prisma.$executeRaw`update "sagaflow"."_prisma_migrations" set rolled_back_at = now() where id = ${last.id}`;
    const pending = await fetch(`${plane.url}/readyz`);
    expect(pending.status).toBe(503);
    expect(await pending.json()).toEqual({
      status: 'not_ready',
      reason: expect.stringContaining(`migrations pending: ${last.migration_name}`) as string,
    });
    await prisma.$executeRaw`update "sagaflow"."_prisma_migrations" set rolled_back_at = null where id = ${last.id}`;
    expect((await fetch(`${plane.url}/readyz`)).status).toBe(200);
  });
});

describe('a database that does not answer: the scrape and the probe are 503 within their bounds (PostgreSQL)', () => {
  let plane: ControlPlane;
  let url: string;
  beforeAll(async () => {
    url = await testDatabaseUrl('metrics_slow');
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: url,
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_METRICS_TOKEN: token,
        SAGAFLOW_METRICS_TIMEOUT_MS: '300',
        SAGAFLOW_READY_TIMEOUT_MS: '300',
      }),
    );
  });
  afterAll(async () => {
    await plane.stop();
  });

  it('while another session holds the tables the reads need, both answer 503 naming their setting; then 200 again', async () => {
    const other = await createDatabase({ kind: 'postgres', url, poolSize: 1 });
    try {
      await other.driver.transaction(async (tx) => {
        await tx.exec('lock table "sagaflow"."anomaly_log", "sagaflow"."_prisma_migrations" in access exclusive mode');
        const scraped = await fetch(`${plane.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
        expect(scraped.status).toBe(503);
        const scrapeBody = await scraped.text();
        expect(scrapeBody).toContain('SAGAFLOW_METRICS_TIMEOUT_MS');
        expect(scrapeBody).not.toMatch(/statement timeout|canceling|anomaly_log/);
        const probed = await fetch(`${plane.url}/readyz`);
        expect(probed.status).toBe(503);
        expect(await probed.json()).toEqual({
          status: 'not_ready',
          reason: 'the database did not answer within 300 ms (SAGAFLOW_READY_TIMEOUT_MS)',
        });
      });
    } finally {
      await other.close();
    }
    expect((await fetch(`${plane.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await fetch(`${plane.url}/readyz`)).status).toBe(200);
  });
});

describe('a metrics address already in use', () => {
  it('stops start-up naming SAGAFLOW_METRICS_ADDRESS, before any database is opened', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', () => resolve()));
    const address = busy.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const dataDir = join(mkdtempSync(join(tmpdir(), 'sagaflow-metrics-busy-')), 'pglite');
    try {
      await expect(
        startControlPlane(
          parseEnv({
            SAGAFLOW_DATA_DIR: dataDir,
            CONTROL_PORT: '0',
            LOG_LEVEL: 'silent',
            SAGAFLOW_METRICS_ADDRESS: `127.0.0.1:${port}`,
          }),
        ),
      ).rejects.toThrow(`SAGAFLOW_METRICS_ADDRESS ${port} on 127.0.0.1 is not available`);
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      busy.close();
    }
  });
});
