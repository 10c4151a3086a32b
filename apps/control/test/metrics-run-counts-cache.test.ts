import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDatabase, type Database } from '@sagaflow/engine';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { parsePrometheus, seriesOf } from './support/parse-prometheus.ts';
import { testDatabaseUrl } from './support/test-plane.ts';
import { createMetricsHandler } from '../src/metrics/create-metrics-handler.ts';

/**
 * ADR 0036: counting every run reads the whole table, so a scrape reuses the last run counts while
 * they are younger than SAGAFLOW_METRICS_RUN_COUNTS_MAX_AGE_MS, says how old they are, and counts
 * again once they are older; the other figures stay live.
 */
describe('/metrics reuses its run counts for a bounded time (PostgreSQL)', () => {
  let db: Database;
  let server: Server;
  let url: string;
  let now = new Date('2026-12-01T12:00:00Z');
  beforeAll(async () => {
    db = await createDatabase({ kind: 'postgres', url: await testDatabaseUrl('metrics-cache'), poolSize: 2 });
    const handler = createMetricsHandler({
      db,
      logger: pino({ level: 'silent' }),
      token: undefined,
      timeoutMs: 5000,
      runCountsMaxAgeMs: 60_000,
      now: () => now,
    });
    server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await db.close();
  });

  const scrape = async () => parsePrometheus(await (await fetch(url)).text());
  const addRun = (status: string) =>
    db.prisma.flowRun.create({
      data: { flow_name: 'cache.flow', flow_version: 1, input: {}, status, stuck_reason: 'unknown_flow: test' },
    });

  it('within the age the runs are the earlier count (stuck runs are live); past it they are counted again', async () => {
    await addRun('Pending');
    const first = await scrape();
    expect(seriesOf(first, 'sagaflow_runs')).toEqual({ 'flow=cache.flow,status=Pending': 1 });
    expect(seriesOf(first, 'sagaflow_runs_counted_seconds_ago')).toEqual({ '': 0 });

    await addRun('Waiting');
    now = new Date(now.getTime() + 59_000);
    const reused = await scrape();
    expect(seriesOf(reused, 'sagaflow_runs')).toEqual({ 'flow=cache.flow,status=Pending': 1 });
    expect(seriesOf(reused, 'sagaflow_runs_counted_seconds_ago')).toEqual({ '': 59 });
    expect(seriesOf(reused, 'sagaflow_stuck_runs')).toEqual({ 'reason=unknown_flow': 2 });

    now = new Date(now.getTime() + 1_000);
    const recounted = await scrape();
    expect(seriesOf(recounted, 'sagaflow_runs')).toEqual({
      'flow=cache.flow,status=Pending': 1,
      'flow=cache.flow,status=Waiting': 1,
    });
    expect(seriesOf(recounted, 'sagaflow_runs_counted_seconds_ago')).toEqual({ '': 0 });
  });
});
