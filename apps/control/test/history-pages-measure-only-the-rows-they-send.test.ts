import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { testDatabaseUrl } from './support/test-plane.ts';
import { parseEnv } from '../src/env.ts';
import { historyPageRows } from '../src/history/history-pages.ts';
import { readRunHistory } from '../src/history/read-run-history.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

interface PlanNode {
  'Actual Rows': number;
  'Actual Loops': number;
  Output?: string[];
  Plans?: PlanNode[];
}

/** The most rows any node of `plan` produced with a row's size among its outputs. */
function rowsMeasured(plan: PlanNode): number {
  const here = (plan.Output ?? []).some((o) => o.includes('octet_length'))
    ? plan['Actual Rows'] * plan['Actual Loops']
    : 0;
  return Math.max(here, ...(plan.Plans ?? []).map(rowsMeasured));
}

/**
 * ADR 0115 (review 45): a download page is cut by bytes, so before each page the sizes of the next
 * rows are read. A run far longer than the table's average (30,000 events where statistics say 5 per
 * run) is planned as "few rows": a bitmap scan of every event of the run past the page's start,
 * sorted, then limited. Measuring a row's size in that same select computed it for every row the sort
 * saw, so each page cost the run's remaining length and the download the square of it (a 30,000-event
 * run took 64 s to download where 3 s were its reads). Each page measures the rows it may send, at
 * most a page's worth, whatever plan the statistics give. Checked in the plans the server ran.
 */
describe('a history page measures only the rows it may send', () => {
  let plane: ControlPlane;
  let runId = '';
  const events = 3_000;
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({ DATABASE_URL: await testDatabaseUrl('history_outlier'), CONTROL_PORT: '0', LOG_LEVEL: 'silent' }),
    );
    const q = plane.db.driver.query.bind(plane.db.driver);
    // Statistics taken while every run had five events, kept as they are (no autovacuum analyze).
    await q(`alter table "sagaflow"."flow_events" set (autovacuum_enabled = false)`);
    await q(
      `with runs as (
         insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, started_at, finished_at)
         select 'outlier.short', 1, 'Completed', '{}'::jsonb, now(), now() from generate_series(1, 400)
         returning id)
       insert into "sagaflow"."flow_events" (run_id, type, sequence, data)
       select runs.id, 'step.completed', g, '{}'::jsonb from runs, generate_series(1, 5) g`,
    );
    await q(`analyze "sagaflow"."flow_events"`);
    runId = (
      await q<{ id: string }>(
        `insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, started_at, finished_at)
         values ('outlier.long', 1, 'Completed', '{}'::jsonb, now(), now()) returning id::text as id`,
      )
    )[0]!.id;
    await q(
      `insert into "sagaflow"."flow_events" (run_id, type, sequence, data)
       select $1::uuid, 'step.completed', g, jsonb_build_object('blob', repeat('x', 500)) from generate_series(1, $2::int) g`,
      [runId, events],
    );
  }, 120_000);
  afterAll(async () => {
    await plane?.stop();
  });

  it('a run thousands of events longer than the average reads its sizes a page at a time', async () => {
    const prisma = plane.db.prisma;
    let measured = 0;
    let statements = 0;
    // The real client, with each size statement also run under EXPLAIN ANALYZE as it was sent.
    const watched = new Proxy(prisma, {
      get(target, key, receiver) {
        if (key !== '$queryRawUnsafe') return Reflect.get(target, key, receiver) as unknown;
        return async (sql: string, ...params: unknown[]) => {
          if (sql.includes('octet_length')) {
            statements += 1;
            const [row] = await target.$queryRawUnsafe<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(
              `explain (analyze, verbose, format json) ${sql}`,
              ...params,
            );
            measured = Math.max(measured, rowsMeasured(row!['QUERY PLAN'][0].Plan));
          }
          return target.$queryRawUnsafe(sql, ...params);
        };
      },
    });
    const doc = await readRunHistory({ prisma: watched }, runId);
    const section = doc?.sections.find((s) => s.key === 'events');
    let written = 0;
    for await (const page of section!.pages()) written += page.length;
    expect(written).toBe(events);
    expect(statements).toBeGreaterThan(events / historyPageRows - 1);
    expect(measured, 'rows whose size one page statement computed').toBeLessThanOrEqual(historyPageRows);
  }, 120_000);
});
