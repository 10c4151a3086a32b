/**
 * What migration 0024's partial indexes save PostgreSQL per flow (ADR 0052): on a throwaway
 * PostgreSQL 15 (test-postgres's settings), the writes a 3-step top-level run makes to flow_runs and
 * action_runs on the hot path (the run inserted Running; per step an insert Running and an update to
 * Completed; the run's finish) for `flows` runs in one server-side loop, so no round trip or client
 * blurs them. Rounds alternate the ten indexes as 0024 builds them (partial) and as before (the same
 * columns on the whole table), each round on emptied tables. Per flow: the backend's own CPU time
 * (user + system, from /proc, so time spent waiting for a core on a loaded machine is not counted)
 * and the WAL it wrote. A measurement, not a test.
 *
 *   pnpm --filter @sagaflow/bench exec node --conditions=@sagaflow/source --import tsx src/measure-mostly-null-indexes.ts [rounds] [flows]
 */
import { readFileSync } from 'node:fs';
import { createDatabase, migrate } from '@sagaflow/engine';
import { createDatabase as createPgDatabase, startCluster } from '@sagaflow/test-postgres';
import pg from 'pg';
import { progress } from './progress.ts';

const rounds = Number(process.argv[2] ?? 8);
const flows = Number(process.argv[3] ?? 3000);

const migration = readFileSync(
  new URL('../../prisma/migrations/0024_partial_indexes_on_mostly_null_columns/migration.sql', import.meta.url),
  'utf8',
);
const partial = [...migration.matchAll(/^CREATE (?:UNIQUE )?INDEX "(\w+)"[^;]*;/gm)].map((m) => ({
  name: m[1] ?? '',
  sql: m[0],
}));
const variants = {
  partial: partial.map((i) => i.sql),
  whole: partial.map((i) => i.sql.replace(/\s+WHERE [^;]*;$/, ';')),
};

/** The hot path's flow_runs and action_runs writes for `flows` runs, in one statement. */
const hotPathWrites = `do $$ declare run uuid; step uuid; begin
  for n in 1..${flows} loop
    insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, started_at, version)
    values ('bench.three-steps', 1, 'Running', jsonb_build_object('n', n), clock_timestamp(), 1) returning id into run;
    for s in 1..3 loop
      insert into "sagaflow"."action_runs" (run_id, sequence, name, status, input, attempts, claimed_by, started_at)
      values (run, s, 'bench.noop', 'Running', jsonb_build_object('n', n, 'step', s), 1, 'w', clock_timestamp())
      returning id into step;
      update "sagaflow"."action_runs" set status = 'Completed', output = jsonb_build_object('n', n, 'step', s),
             finished_at = clock_timestamp(), updated_at = clock_timestamp(), reclaim_stale_at = null
       where id = step;
    end loop;
    update "sagaflow"."flow_runs" set status = 'Completed', output = jsonb_build_object('n', n), waiting_for = null,
           stuck_reason = null, finished_at = clock_timestamp(), updated_at = clock_timestamp(), version = version + 1
     where id = run;
  end loop; end $$`;

/** User + system CPU of one process, in milliseconds (clock ticks of 10 ms). */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function round(client: pg.Client, pid: number, variant: keyof typeof variants) {
  await client.query('truncate "sagaflow"."action_runs", "sagaflow"."flow_runs" cascade');
  for (const i of partial) await client.query(`drop index "sagaflow"."${i.name}"`);
  for (const sql of variants[variant]) await client.query(sql);
  await client.query('checkpoint');
  const [lsn] = (await client.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows;
  const cpu = processCpuMs(pid);
  await client.query(hotPathWrites);
  const cpuMs = processCpuMs(pid) - cpu;
  const [wal] = (
    await client.query<{ bytes: string }>('select pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::bigint as bytes', [
      lsn?.lsn,
    ])
  ).rows;
  return { cpuUs: (cpuMs * 1000) / flows, walBytes: Number(wal?.bytes) / flows };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

const cluster = await startCluster({ log: (line) => progress(`test-postgres: ${line}`) });
try {
  const url = await createPgDatabase(cluster.adminUrl, 'bench_mostly_null');
  const db = await createDatabase({ kind: 'postgres', url, poolSize: 2 });
  await migrate(db);
  await db.close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const [me] = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows;
    const pid = me?.pid ?? 0;
    const seen = {
      partial: [] as { cpuUs: number; walBytes: number }[],
      whole: [] as { cpuUs: number; walBytes: number }[],
    };
    for (let r = 0; r < rounds; r++)
      for (const variant of r % 2 === 0 ? (['whole', 'partial'] as const) : (['partial', 'whole'] as const)) {
        const m = await round(client, pid, variant);
        seen[variant].push(m);
        progress(
          `round ${r + 1} ${variant}: ${m.cpuUs.toFixed(0)} us CPU, ${m.walBytes.toFixed(0)} WAL bytes per flow`,
        );
      }
    for (const variant of ['whole', 'partial'] as const)
      process.stdout.write(
        `${variant}: median ${median(seen[variant].map((m) => m.cpuUs)).toFixed(0)} us CPU per flow ` +
          `(rounds ${seen[variant].map((m) => m.cpuUs.toFixed(0)).join(', ')}), ` +
          `${median(seen[variant].map((m) => m.walBytes)).toFixed(0)} WAL bytes per flow\n`,
      );
  } finally {
    await client.end();
  }
} finally {
  await cluster.stop();
}
