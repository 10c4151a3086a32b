import { parseArgs } from 'node:util';
import { createDatabase, uniqueDatabaseName } from '@sagaflow/test-postgres';
import { analyzeLikeAutovacuum } from './analyze-like-autovacuum.ts';
import { createBenchFlow } from './bench-flow.ts';
import { markdownTable } from './markdown-table.ts';
import { labelPoolCounters } from './pool-counters-per-flow.ts';
import { openBenchEngine } from './open-bench-engine.ts';
import { prepareTemplateDatabase } from './prepare-template-database.ts';
import { progress } from './progress.ts';
import { waitForNoSessions } from './read-database-counters.ts';
import { readCpuTimes } from './read-cpu-times.ts';
import { runClosedLoop } from './run-closed-loop.ts';
import { driveEngine } from './sagaflow-peer.ts';
import { startBenchCluster } from './start-bench-cluster.ts';
import { withPgClient } from './with-pg-client.ts';

/**
 * `pnpm --filter @sagaflow/bench run bench:statements [concurrency] [seconds] [--no-analyze]
 * [--separate-starter]`: what
 * PostgreSQL does per flow for the engine's hot path, statement by statement, to say where its CPU
 * goes before changing a statement (issue 11). The bench's closed loop of the 3-step no-op flow on a
 * throwaway PostgreSQL 15 (test-postgres's settings: fsync off); after a warm-up the database is
 * analyzed as autovacuum would have by then (ADR 0051; `--no-analyze` keeps the empty template's
 * statistics, as the bench did before), warmed up again, and measured. Per statement: calls, how
 * many times it was planned (a prepared statement planned on every call is using custom plans),
 * planning and execution time, shared buffers touched and WAL records, all per flow; per table:
 * rows inserted, updated (HOT or not) and deleted, and how many indexes each write maintains.
 */
async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    args: process.argv.slice(2).filter((a) => a !== '--'),
    options: {
      'no-analyze': { type: 'boolean', default: false },
      'separate-starter': { type: 'boolean', default: false },
    },
  });
  const concurrency = Number(positionals[0] ?? 8);
  const seconds = Number(positionals[1] ?? 10);
  const { cluster } = await startBenchCluster();
  try {
    await withPgClient(cluster.adminUrl, async (c) => {
      await c.query('alter system set pg_stat_statements.track_planning = on');
      await c.query('select pg_reload_conf()');
    });
    await prepareTemplateDatabase(cluster.adminUrl, 'statements_template');
    const url = await createDatabase(cluster.adminUrl, uniqueDatabaseName('statements'), {
      template: 'statements_template',
    });
    const name = new URL(url).pathname.slice(1);
    const bench = createBenchFlow();
    const { db, engine } = await openBenchEngine(url, concurrency, bench);
    // --separate-starter: the flows are started by a second engine that runs no workers.
    const starter = values['separate-starter'] ? await openBenchEngine(url, concurrency, bench) : undefined;
    const peer = driveEngine(bench, db, engine, starter?.engine);
    let allFlows = 0;
    try {
      progress(`warm-up: c=${concurrency}, 3 s`);
      allFlows += (await runClosedLoop(concurrency, 3_000, (n) => peer.runOne(n))).flows;
      if (!values['no-analyze']) {
        progress('analyze, then warm-up again on the new plans: 2 s');
        await analyzeLikeAutovacuum(url);
        allFlows += (await runClosedLoop(concurrency, 2_000, (n) => peer.runOne(n))).flows;
      }
      await withPgClient(cluster.adminUrl, (c) => c.query('select pg_stat_statements_reset()'));
      const before = await readCpuTimes(cluster.dataDir);
      const poolBefore = labelPoolCounters(engine.workerCounters()!);
      progress(`measuring: c=${concurrency}, ${seconds} s`);
      const loop = await runClosedLoop(concurrency, seconds * 1_000, (n) => peer.runOne(n));
      const after = await readCpuTimes(cluster.dataDir);
      const poolAfter = labelPoolCounters(engine.workerCounters()!);
      const flows = loop.flows;
      allFlows += flows;
      const perFlow = (n: number | string, digits = 3) => (Number(n) / flows).toFixed(digits);
      console.log(
        `c=${concurrency}${values['no-analyze'] ? ' (never analyzed)' : ' (analyzed)'}${starter ? ', started by another engine' : ''}: ` +
          `${((flows * 1_000) / loop.windowMs).toFixed(0)} flows/s; Node CPU ${perFlow(after.nodeMs - before.nodeMs, 2)} ms/flow; ` +
          `PostgreSQL CPU ${perFlow((after.postgresMs ?? 0) - (before.postgresMs ?? 0), 2)} ms/flow\n`,
      );
      console.log(
        markdownTable(
          ['worker pool', 'per flow'],
          poolAfter.map(([label, n], i) => [label, perFlow(n - (poolBefore[i]?.[1] ?? 0), 2)]),
        ) + '\n',
      );
      const statements = await withPgClient(cluster.adminUrl, (c) =>
        c.query<Record<string, string>>(
          `select left(regexp_replace(s.query, '\\s+', ' ', 'g'), 60) as query, s.calls, s.plans,
                  s.total_plan_time, s.total_exec_time, s.shared_blks_hit + s.shared_blks_read as buffers, s.wal_records
             from pg_stat_statements s join pg_database d on d.oid = s.dbid
            where d.datname = $1 order by s.total_exec_time desc limit 12`,
          [name],
        ),
      );
      console.log(
        markdownTable(
          [
            'statement',
            'calls / flow',
            'plans / call',
            'plan ms / flow',
            'exec ms / flow',
            'buffers / flow',
            'WAL records / flow',
          ],
          statements.rows.map((s) => [
            `\`${s.query}\``,
            perFlow(s.calls!, 2),
            (Number(s.plans) / Math.max(1, Number(s.calls))).toFixed(2),
            perFlow(s.total_plan_time!),
            perFlow(s.total_exec_time!),
            perFlow(s.buffers!, 1),
            perFlow(s.wal_records!, 1),
          ]),
        ),
      );
    } finally {
      await peer.close();
      await starter?.db.close();
    }
    // Every backend has exited, so has flushed its counts: the writes of the whole phase, warm-ups included.
    await waitForNoSessions(cluster.adminUrl, name);
    const writes = await readTableWrites(url);
    const perRun = (n: string) => (Number(n) / allFlows).toFixed(2);
    console.log(
      `\nRow writes per flow over the whole phase (${allFlows} flows, warm-ups included):\n` +
        markdownTable(
          ['table', 'indexes', 'inserts', 'updates', 'of them HOT', 'deletes'],
          writes.map((t) => [t.table, String(t.indexes), perRun(t.ins), perRun(t.upd), perRun(t.hot), perRun(t.del)]),
        ),
    );
  } finally {
    await cluster.stop();
  }
}

interface TableWrites {
  table: string;
  indexes: number;
  ins: string;
  upd: string;
  hot: string;
  del: string;
}

/** Row writes so far per table of the engine's schema (pg_stat_user_tables), with its index count. */
async function readTableWrites(url: string): Promise<TableWrites[]> {
  return withPgClient(url, async (c) => {
    const result = await c.query<TableWrites>(
      `select s.relname as table, (select count(*)::int from pg_index i where i.indrelid = s.relid) as indexes,
              s.n_tup_ins as ins, s.n_tup_upd as upd, s.n_tup_hot_upd as hot, s.n_tup_del as del
         from pg_stat_user_tables s
        where s.schemaname = 'sagaflow' and s.n_tup_ins + s.n_tup_upd + s.n_tup_del > 0 order by s.relname`,
    );
    return result.rows;
  });
}

await main();
