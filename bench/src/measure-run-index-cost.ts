/**
 * What the open-runs partial index of migration 0020 (`flow_runs_open_flow_version_status_idx`, the
 * definitions page's counts) adds to a run's status change (ADR 0036): on a throwaway PostgreSQL 15
 * (test-postgres's settings), 20 k open runs; 5,000 single-row status flips (Running <-> Waiting, the
 * non-HOT update a run transition makes) in one server-side loop, so no round trip blurs them; six
 * rounds alternating with and without the index. Prints microseconds per update; a measurement, not a test.
 *
 *   pnpm --filter @sagaflow/bench exec node --conditions=@sagaflow/source --import tsx src/measure-run-index-cost.ts
 */
import { createDatabase, migrate } from '@sagaflow/engine';
import { createDatabase as createPgDatabase, startCluster } from '@sagaflow/test-postgres';
import pg from 'pg';
import { progress } from './progress.ts';

const createIndex = `create index flow_runs_open_flow_version_status_idx on "sagaflow"."flow_runs" (flow_name, flow_version, status)
  where status in ('Pending', 'Running', 'Waiting', 'Compensating')`;
const flips = 5000;

/** Microseconds per run update over one server-side loop of `flips` status flips. */
async function flipStatuses(client: pg.Client): Promise<number> {
  const start = performance.now();
  await client.query(`do $$ declare r record; begin
    for r in select id from "sagaflow"."flow_runs" limit ${flips} loop
      update "sagaflow"."flow_runs"
         set status = case status when 'Running' then 'Waiting' else 'Running' end, updated_at = clock_timestamp()
       where id = r.id;
    end loop; end $$`);
  return ((performance.now() - start) * 1000) / flips;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

const cluster = await startCluster({ log: (line) => progress(`test-postgres: ${line}`) });
try {
  const url = await createPgDatabase(cluster.adminUrl, 'bench_run_index');
  const db = await createDatabase({ kind: 'postgres', url, poolSize: 2 });
  await migrate(db);
  await db.close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input)
      select 'f' || (g % 20), 1, case when g % 2 = 0 then 'Running' else 'Waiting' end, '{}'::jsonb
        from generate_series(1, 20000) g`);
    await client.query('vacuum analyze "sagaflow"."flow_runs"');
    const withIndex: number[] = [];
    const without: number[] = [];
    for (let round = 0; round < 6; round++) {
      withIndex.push(await flipStatuses(client));
      await client.query('drop index "sagaflow"."flow_runs_open_flow_version_status_idx"');
      without.push(await flipStatuses(client));
      await client.query(createIndex);
    }
    process.stdout.write(
      `run status flip, us per update (median of 6 rounds): with the open-runs index ${median(withIndex).toFixed(0)}, without ${median(without).toFixed(0)}\n` +
        `rounds with: ${withIndex.map((x) => x.toFixed(0)).join(', ')}; without: ${without.map((x) => x.toFixed(0)).join(', ')}\n`,
    );
  } finally {
    await client.end();
  }
} finally {
  await cluster.stop();
}
