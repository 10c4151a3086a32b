/**
 * Prints PostgreSQL's EXPLAIN (ANALYZE, BUFFERS) for each read /metrics makes, on a throwaway cluster
 * filled with a large history (numbers below), so the plans in ADR 0017 can be checked again:
 *   node_modules/.bin/tsx apps/control/bench/explain-metrics-reads.ts
 */
import { createDatabase, migrate } from '@sagaflow/engine';
import { createDatabase as createPgDatabase, startCluster } from '@sagaflow/test-postgres';
import { readAnomalyCounts } from '../src/metrics/reads/read-anomaly-counts.ts';
import { readInstanceCounts } from '../src/metrics/reads/read-instance-counts.ts';
import { readRunCounts } from '../src/metrics/reads/read-run-counts.ts';
import { readStepDurations } from '../src/metrics/reads/read-step-durations.ts';
import { readStuckCounts } from '../src/metrics/reads/read-stuck-counts.ts';
import { readTransitionCounts } from '../src/metrics/reads/read-transition-counts.ts';
import type { SqlReader } from '../src/metrics/reads/sql-reader.ts';

// `tsx explain-metrics-reads.ts [runs] [instances]`
const RUNS = Number(process.argv[2] ?? 300_000);
const INSTANCES = Number(process.argv[3] ?? 200_000);

const cluster = await startCluster();
try {
  const url = await createPgDatabase(cluster.adminUrl, 'explain_metrics');
  const db = await createDatabase({ kind: 'postgres', url, poolSize: 2 });
  await migrate(db);
  const t0 = Date.now();
  await db.driver.exec(`
    insert into sagaflow.flow_runs (id, flow_name, flow_version, status, stuck_reason, input, started_at, finished_at)
    select gen_random_uuid(), 'flow-' || (g % 5), 1,
           case when g % 1000 = 0 then 'Waiting' when g % 50 = 0 then 'Compensated' else 'Completed' end,
           case when g % 2500 = 0 then 'replay_blocked: step 2 differs' end,
           '{}'::jsonb, now() - interval '1 day', now()
      from generate_series(1, ${RUNS}) g;
    insert into sagaflow.action_runs (run_id, sequence, name, status, input, started_at, finished_at, updated_at)
    select r.id, s, 'action-' || s, 'Completed', '{}'::jsonb, f - interval '1 second' * random(), f, f
      from (select id, now() - interval '1 day' * random() as f from sagaflow.flow_runs) r cross join generate_series(1, 3) s;
    insert into sagaflow.saga_instances (process_name, correlation_key, status, current_state, updated_at)
    select 'proc-' || (g % 3), 'k' || g,
           case when g % 100 = 0 then 'ACTIVE' when g % 5000 = 0 then 'QUARANTINED' else 'COMPLETED' end,
           'S' || (g % 7), now() - interval '1 second' * g
      from generate_series(1, ${INSTANCES}) g;
    insert into sagaflow.process_transitions (instance_id, process_name, from_state, to_state, message_id, message_type, outcome)
    select i.id, i.process_name, 'S' || n, 'S' || (n + 1), gen_random_uuid()::text, 'm', case when n = 4 then 'ignored' else 'applied' end
      from sagaflow.saga_instances i cross join generate_series(1, 5) n;
    insert into sagaflow.anomaly_log (code, message)
    select (array['claim_lost','outcome_rejected','expiry_failed'])[1 + g % 3], 'x' from generate_series(1, ${RUNS / 5}) g;`);
  await db.driver.query('vacuum analyze');
  console.log(
    `filled in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${RUNS} runs, ${RUNS * 3} actions, ${INSTANCES} instances, ${INSTANCES * 5} transitions, ${RUNS / 5} anomalies\n`,
  );

  /** A reader that answers each statement with its plan instead of its rows. */
  const explaining = (label: string): SqlReader => {
    const explain = async (sql: string, values: unknown[]) => {
      const plan = await db.prisma.$queryRawUnsafe<{ 'QUERY PLAN': string }[]>(
        `explain (analyze, buffers) ${sql}`,
        ...values,
      );
      console.log(`--- ${label}\n${plan.map((p) => p['QUERY PLAN']).join('\n')}\n`);
      return [];
    };
    return {
      $queryRaw: ((strings: TemplateStringsArray, ...values: unknown[]) =>
        explain(
          strings.reduce((acc, s, i) => acc + (i === 0 ? '' : `$${i}`) + s, ''),
          values,
        )) as SqlReader['$queryRaw'],
      $queryRawUnsafe: ((sql: string, ...values: unknown[]) => explain(sql, values)) as SqlReader['$queryRawUnsafe'],
    };
  };
  await readRunCounts(explaining('runs by flow and status'));
  await readStuckCounts(explaining('stuck runs by reason'));
  // One scrape's window: 15 seconds of a history whose steps finished over the day before the fill.
  await readStepDurations(explaining('step durations finished in a 15 s window'), {
    after: new Date(t0 - 3_600_000 - 15_000),
    until: new Date(t0 - 3_600_000),
  });
  await readAnomalyCounts(explaining('anomalies by code'));
  await readInstanceCounts(explaining('open instances by process, state, status'));
  await readTransitionCounts(explaining('transitions by process, from, to'));
  await db.close();
} finally {
  await cluster.stop();
}
