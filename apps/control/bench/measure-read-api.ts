/**
 * How long the console's read API takes on a big database (ADR 0022). Not a test: run it by hand,
 *   node_modules/.bin/tsx apps/control/bench/measure-read-api.ts [runs=200000]
 * It starts a throwaway PostgreSQL 15 cluster (@sagaflow/test-postgres), migrates a database,
 * writes `runs` runs spread over the last 7 days (95 % finished) and, in proportion, anomalies,
 * process instances and transitions, outbox rows, repairs and audit events, with SQL
 * generate_series; VACUUM ANALYZE; then times each read (median of 5, after one warm-up) and
 * prints a Markdown table, with the plan of the widest series read.
 */
import { createDatabase, migrate, type Database } from '@sagaflow/engine';
import { createDatabase as createPgDatabase, startCluster } from '@sagaflow/test-postgres';
import { pageAnomalies, pageAnomaliesInput } from '../src/api/anomalies/page-anomalies.ts';
import { pageAudit, pageAuditInput } from '../src/api/audit/page-audit.ts';
import { readDefinitions } from '../src/api/definitions/read-definitions.ts';
import { readOverview } from '../src/api/overview/read-overview.ts';
import { readSeries } from '../src/api/series/read-series.ts';
import { seriesInput } from '../src/api/series/series-window.ts';
import { createControlEngine } from '../src/control-engine.ts';
import { parseEnv } from '../src/env.ts';
import { pino } from 'pino';

const runs = Number(process.argv[2] ?? 200_000);
const log = (line: string) => process.stderr.write(`[measure] ${line}\n`);

async function seed(db: Database) {
  const sql = (text: string) => db.prisma.$executeRawUnsafe(text);
  log(`writing ${runs} runs over 7 days`);
  await sql(`
    insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, created_at, updated_at, finished_at)
    select 'demo.order', 1,
           case when i % 20 = 0 then 'Waiting' when i % 10 = 1 then 'Failed' else 'Completed' end,
           '{}'::jsonb, t, t + interval '2 seconds',
           case when i % 20 = 0 then null else t + interval '2 seconds' end
      from (select i, now() - (i::float8 / ${runs}) * interval '7 days' as t from generate_series(1, ${runs}) i) s`);
  const instances = Math.max(100, Math.floor(runs / 10));
  log(`writing ${instances} instances, ${instances * 5} transitions`);
  await sql(`
    insert into "sagaflow"."saga_instances" (process_name, correlation_key, status, current_state, created_at, updated_at)
    select 'demo.fulfilment', 'k-' || i, case when i % 50 = 0 then 'QUARANTINED' when i % 3 = 0 then 'ACTIVE' else 'COMPLETED' end,
           (array['AwaitingPayment','Reserving','Shipping','ManualReview','Completed'])[1 + i % 5],
           now() - (i::float8 / ${instances}) * interval '7 days', now() - (i::float8 / ${instances}) * interval '7 days'
      from generate_series(1, ${instances}) i`);
  await sql(`
    insert into "sagaflow"."process_transitions" (instance_id, process_name, from_state, to_state, message_id, message_type, at)
    select s.id, s.process_name, (array['New','AwaitingPayment','Reserving','Shipping','Refunding'])[1 + g % 5],
           (array['AwaitingPayment','Reserving','Shipping','Completed','ManualReview'])[1 + g % 5],
           s.id::text || '-' || g, 'M', s.created_at + g * interval '1 minute'
      from "sagaflow"."saga_instances" s, generate_series(0, 4) g`);
  const journal = Math.max(100, Math.floor(runs / 10));
  log(`writing ${journal} anomalies, ${journal} outbox rows, ${journal / 10} repairs and audit events`);
  await sql(`
    insert into "sagaflow"."anomaly_log" (code, message, at)
    select (array['claim_lost','outcome_rejected','write_refused'])[1 + i % 3], 'seeded', now() - (i::float8 / ${journal}) * interval '7 days'
      from generate_series(1, ${journal}) i`);
  await sql(`
    insert into "sagaflow"."outbox" (message_id, source_kind, source_id, type, destination, payload, status, created_at, published_at)
    select 'm-' || i, 'process', 'x', 'T', 'd', '{}'::jsonb, 'Published', t, t + (i % 7) * interval '1 second'
      from (select i, now() - (i::float8 / ${journal}) * interval '7 days' as t from generate_series(1, ${journal}) i) s`);
  await sql(`
    insert into "sagaflow"."repair_commands" (actor, command, target_type, target_id, expected, actual, result, reason, idempotency_key, status, at)
    select 'op-' || (i % 7), 'run.kick', 'run', gen_random_uuid()::text, '{}', '{}', '{}', 'seeded', 'k-' || i,
           case when i % 4 = 0 then 'conflict' else 'applied' end, now() - (i::float8 / ${journal / 10}) * interval '7 days'
      from generate_series(1, ${journal / 10}) i`);
  await sql(`
    insert into "sagaflow"."audit_events" (actor, action, outcome, at)
    select 'op-' || (i % 7), 'sign_in', 'succeeded', now() - (i::float8 / ${journal / 10}) * interval '7 days'
      from generate_series(1, ${journal / 10}) i`);
  log('vacuum analyze');
  await sql('vacuum analyze');
}

async function timed(label: string, read: () => Promise<unknown>): Promise<[string, number]> {
  await read();
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    await read();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return [label, Math.round((times[2] ?? 0) * 10) / 10];
}

const cluster = await startCluster({ log });
try {
  const url = await createPgDatabase(cluster.adminUrl, 'read_api_measure');
  const db = await createDatabase({ kind: 'postgres', url });
  try {
    await migrate(db);
    await seed(db);
    const engine = createControlEngine(
      db,
      parseEnv({ DATABASE_URL: url, LOG_LEVEL: 'silent' }),
      pino({ level: 'silent' }),
    );
    const now = new Date();
    const ctx = { db, engine };
    const rows: [string, number][] = [];
    for (const window of ['1h', '6h', '24h', '7d'] as const)
      rows.push(await timed(`series.get ${window}`, () => readSeries(db, seriesInput.parse({ window }), now)));
    rows.push(await timed('anomalies.page (first 50)', () => pageAnomalies(ctx, pageAnomaliesInput.parse({}))));
    rows.push(
      await timed('anomalies.page code=claim_lost', () =>
        pageAnomalies(ctx, pageAnomaliesInput.parse({ code: 'claim_lost' })),
      ),
    );
    rows.push(await timed('audit.page (first 50)', () => pageAudit(ctx, pageAuditInput.parse({}))));
    rows.push(await timed('audit.page actor=op-3', () => pageAudit(ctx, pageAuditInput.parse({ actor: 'op-3' }))));
    rows.push(await timed('definitions.list', () => readDefinitions(ctx)));
    rows.push(await timed('overview.get', () => readOverview(db)));
    const counts = await db.prisma.$queryRawUnsafe<{ n: number }[]>(
      `select count(*)::int as n from "sagaflow"."flow_runs" where finished_at >= now() - interval '7 days'`,
    );
    console.log(`\n${runs} runs (${counts[0]?.n ?? '?'} finished in the last 7 days), PostgreSQL 15\n`);
    console.log('| read | median ms (5 runs after a warm-up) |\n|---|---|');
    for (const [label, ms] of rows) console.log(`| ${label} | ${ms} |`);
    const plan = await db.prisma.$queryRawUnsafe<{ 'QUERY PLAN': string }[]>(
      `explain (analyze, buffers) select date_bin('3600 seconds'::interval, r.finished_at, timestamptz '2000-01-01 00:00:00+00'), r.status, count(*)
         from "sagaflow"."flow_runs" r where r.finished_at >= now() - interval '1 hour' and r.finished_at < now() group by 1, 2`,
    );
    console.log(`\nPlan of runs finished, last hour:\n\n${plan.map((p) => `    ${p['QUERY PLAN']}`).join('\n')}`);
    const transitions = await db.prisma.$queryRawUnsafe<{ 'QUERY PLAN': string }[]>(
      `explain (analyze, buffers) select date_bin('60 seconds'::interval, t.at, timestamptz '2000-01-01 00:00:00+00'),
              i.process_name, t.from_state, t.to_state, count(*)
         from "sagaflow"."process_transitions" t join "sagaflow"."saga_instances" i on i.id = t.instance_id
        where t.at >= now() - interval '1 hour' and t.at < now() and t.outcome in ('applied', 'repair')
        group by 1, 2, 3, 4`,
    );
    console.log(`\nPlan of transitions, last hour:\n\n${transitions.map((p) => `    ${p['QUERY PLAN']}`).join('\n')}`);
  } finally {
    await db.close();
  }
} finally {
  await cluster.stop();
}
