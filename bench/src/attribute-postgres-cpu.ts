import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type pg from 'pg';
import { createDatabase, uniqueDatabaseName } from '@sagaflow/test-postgres';
import { analyzeLikeAutovacuum, warmupFlowsBeforeAnalyze } from './analyze-like-autovacuum.ts';
import { createBenchFlow } from './bench-flow.ts';
import { markdownTable } from './markdown-table.ts';
import { openBenchEngine } from './open-bench-engine.ts';
import { parseStepEventsArm, prepareTemplateDatabase } from './prepare-template-database.ts';
import { progress } from './progress.ts';
import { cpuByKind, readPostgresCpu } from './read-postgres-process-cpu.ts';
import { readWalByRelation } from './read-wal-by-relation.ts';
import { runClosedLoop } from './run-closed-loop.ts';
import { driveEngine } from './sagaflow-peer.ts';
import { startBenchCluster } from './start-bench-cluster.ts';
import { withDurableServer } from './with-durable-server.ts';
import { withPgClient } from './with-pg-client.ts';

/**
 * `pnpm --filter @sagaflow/bench run bench:pgcpu [concurrency] [seconds] [--fsync-off] [--json] [--without-run-fks] [--step-events written|dropped|passed]`: where
 * the PostgreSQL CPU of a flow goes (issue 11, ADR 0062). The bench's closed loop of the 3-step no-op
 * flow, durable commits unless `--fsync-off`, warmed up, analyzed, warmed up again, then measured:
 * - CPU per flow of every process of the cluster by kind (the engine's backends, WAL writer,
 *   checkpointer, background writer, autovacuum, the postmaster, children that exited), from
 *   /proc/<pid>/schedstat (nanoseconds), with the time each waited for a core;
 * - the backends' CPU against pg_stat_statements' planning + execution time: what is outside the
 *   executor (parse, bind, the commit's WAL insert and flush, the protocol);
 * - pg_stat_wal (records, full-page images, bytes, writes and syncs with their time);
 * - every WAL record of the window by relation and kind (pg_walinspect): a B-tree INSERT_LEAF is an
 *   index entry written, a Heap HOT_UPDATE a heap-only update;
 * - per statement: calls, plans, plan and execution time per call and per flow.
 * `--without-run-fks` measures a schema without the foreign keys to flow_runs (ADR 0068), as an A/B arm.
 * `--step-events dropped` discards every step's events on insert, `passed` keeps them through the same
 * trigger (ADR 0072): their difference bounds what storing them costs.
 */
async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    args: process.argv.slice(2).filter((a) => a !== '--'),
    options: {
      'fsync-off': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      'without-run-fks': { type: 'boolean', default: false },
      'step-events': { type: 'string' },
      'explain-sample': { type: 'string' },
      'explain-log': { type: 'string', default: 'pgcpu-explain.log' },
    },
  });
  const [concurrency, seconds] = [Number(positionals[0] ?? 8), Number(positionals[1] ?? 8)];
  const { cluster } = await startBenchCluster();
  try {
    const explain = values['explain-sample'];
    // auto_explain (with ANALYZE, BUFFERS and trigger times) for a sample of the statements, nested ones
    // (a foreign key's check) included; loaded in each new session, so in every pool connection.
    const explainSettings = [
      `session_preload_libraries = 'auto_explain'`,
      'auto_explain.log_min_duration = 0',
      'auto_explain.log_analyze = on',
      'auto_explain.log_buffers = on',
      'auto_explain.log_triggers = on',
      'auto_explain.log_nested_statements = on',
      `auto_explain.sample_rate = ${Number(explain)}`,
    ];
    await withPgClient(cluster.adminUrl, async (c) => {
      if (explain !== undefined) await c.query(`load 'auto_explain'`);
      const settings = ['pg_stat_statements.track_planning = on', 'track_wal_io_timing = on'];
      for (const setting of [...settings, ...(explain === undefined ? [] : explainSettings)])
        await c.query(`alter system set ${setting}`);
      await c.query('select pg_reload_conf()');
    });
    await prepareTemplateDatabase(cluster.adminUrl, 'pgcpu_template', {
      withoutRunForeignKeys: values['without-run-fks'],
      stepEvents: parseStepEventsArm(values['step-events']),
    });
    const url = await createDatabase(cluster.adminUrl, uniqueDatabaseName('pgcpu'), { template: 'pgcpu_template' });
    await withPgClient(url, (c) => c.query('create extension if not exists pg_walinspect'));
    const run = () => measure(url, cluster.adminUrl, cluster.dataDir, concurrency, seconds);
    const report = values['fsync-off'] ? await run() : await withDurableServer(cluster, run);
    console.log(values.json ? JSON.stringify(report, null, 2) : render(report));
    if (values['explain-sample'] !== undefined) {
      copyFileSync(join(cluster.dataDir, 'server.log'), values['explain-log']);
      progress(`the sampled plans are in ${values['explain-log']}`);
    }
  } finally {
    await cluster.stop();
  }
}

type Report = Awaited<ReturnType<typeof measure>>;

async function measure(url: string, adminUrl: string, dataDir: string, concurrency: number, seconds: number) {
  const name = new URL(url).pathname.slice(1);
  const bench = createBenchFlow();
  const { db, engine } = await openBenchEngine(url, concurrency, bench);
  const peer = driveEngine(bench, db, engine);
  try {
    progress(`warm-up: c=${concurrency}, 3 s and at least ${warmupFlowsBeforeAnalyze} flows`);
    await runClosedLoop(concurrency, 3_000, (n) => peer.runOne(n), { atLeastFlows: warmupFlowsBeforeAnalyze });
    progress('analyze, then warm-up again on the new plans: 2 s');
    await analyzeLikeAutovacuum(url);
    await runClosedLoop(concurrency, 2_000, (n) => peer.runOne(100_000_000 + n));
    return await withPgClient(url, async (c) => {
      await withPgClient(adminUrl, (a) => a.query(`select pg_stat_statements_reset(), pg_stat_reset_shared('wal')`));
      const tablesBefore = await readTableWrites(c);
      const lsnBefore = (await c.query<{ lsn: string }>('select pg_current_wal_insert_lsn() as lsn')).rows[0]!.lsn;
      const cpuBefore = await readPostgresCpu(dataDir, adminUrl);
      const nodeBefore = process.cpuUsage();
      progress(`measuring: c=${concurrency}, ${seconds} s`);
      const loop = await runClosedLoop(concurrency, seconds * 1_000, (n) => peer.runOne(200_000_000 + n));
      const node = process.cpuUsage(nodeBefore);
      const cpuAfter = await readPostgresCpu(dataDir, adminUrl);
      const lsnAfter = (await c.query<{ lsn: string }>('select pg_current_wal_insert_lsn() as lsn')).rows[0]!.lsn;
      const flows = loop.flows;
      const wal = (await c.query<Record<string, number>>(`select * from pg_stat_wal`)).rows[0]!;
      const statements = await withPgClient(adminUrl, (a) => readStatements(a, name));
      // Table counters are flushed by each backend at its transaction ends (at most once a second).
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const tablesAfter = await readTableWrites(c);
      await c.query('select pg_sleep(0.2)');
      const walRecords = await readWalByRelation(c, lsnBefore, lsnAfter);
      const processes = cpuByKind(cpuBefore, cpuAfter);
      return {
        concurrency,
        seconds,
        flows,
        flowsPerSecond: (flows * 1_000) / loop.windowMs,
        nodeCpuMs: (node.user + node.system) / 1000,
        processes,
        engineBackend: `client backend@${name}`,
        statements,
        wal,
        walRecords,
        tables: tablesAfter.map((t) => {
          const b = tablesBefore.find((x) => x.table === t.table);
          return {
            table: t.table,
            indexes: t.indexes,
            ins: t.ins - (b?.ins ?? 0),
            upd: t.upd - (b?.upd ?? 0),
            hot: t.hot - (b?.hot ?? 0),
            del: t.del - (b?.del ?? 0),
            seq: t.seq - (b?.seq ?? 0),
            seqRead: t.seqRead - (b?.seqRead ?? 0),
            idx: t.idx - (b?.idx ?? 0),
          };
        }),
      };
    });
  } finally {
    await peer.close();
  }
}

async function readStatements(c: pg.Client, name: string) {
  const result = await c.query<Record<string, string>>(
    `select left(regexp_replace(s.query, '\\s+', ' ', 'g'), 48) as query, s.calls, s.plans,
            s.total_plan_time, s.total_exec_time, s.shared_blks_hit + s.shared_blks_read as buffers, s.wal_records,
            s.wal_fpi, s.wal_bytes
       from pg_stat_statements s join pg_database d on d.oid = s.dbid
      where d.datname = $1 order by s.total_exec_time desc`,
    [name],
  );
  return result.rows.map((s) => ({
    query: s.query!,
    calls: Number(s.calls),
    plans: Number(s.plans),
    planMs: Number(s.total_plan_time),
    execMs: Number(s.total_exec_time),
    buffers: Number(s.buffers),
    walRecords: Number(s.wal_records),
    walFpi: Number(s.wal_fpi),
    walBytes: Number(s.wal_bytes),
  }));
}

async function readTableWrites(c: pg.Client) {
  const result = await c.query<Record<string, string>>(
    `select s.relname as table, (select count(*) from pg_index i where i.indrelid = s.relid) as indexes,
            s.n_tup_ins as ins, s.n_tup_upd as upd, s.n_tup_hot_upd as hot, s.n_tup_del as del,
            s.seq_scan as seq, s.seq_tup_read as seq_read, coalesce(s.idx_scan, 0) as idx
       from pg_stat_user_tables s where s.schemaname = 'sagaflow' order by s.relname`,
  );
  return result.rows.map((t) => ({
    table: t.table!,
    indexes: Number(t.indexes),
    ins: Number(t.ins),
    upd: Number(t.upd),
    hot: Number(t.hot),
    del: Number(t.del),
    seq: Number(t.seq),
    seqRead: Number(t.seq_read),
    idx: Number(t.idx),
  }));
}

function render(r: Report): string {
  const f = (n: number, digits = 3) => (n / r.flows).toFixed(digits);
  const total = r.processes.reduce((a, p) => a + p.cpuMs, 0);
  const backends = r.processes.find((p) => p.kind === r.engineBackend)?.cpuMs ?? 0;
  const inStatements = r.statements.reduce((a, s) => a + s.execMs + s.planMs, 0);
  const lines = [
    `c=${r.concurrency}, ${r.seconds} s: ${r.flowsPerSecond.toFixed(0)} flows/s (${r.flows} flows); ` +
      `PostgreSQL CPU ${f(total)} ms/flow, Node CPU ${f(r.nodeCpuMs)} ms/flow`,
    '',
    markdownTable(
      ['process kind', 'processes', 'CPU ms / flow', 'queued for a core ms / flow'],
      r.processes.map((p) => [p.kind, String(p.processes), f(p.cpuMs), f(p.queuedMs)]),
    ),
    '',
    `Engine backends: CPU ${f(backends)} ms/flow; pg_stat_statements plan + exec ${f(inStatements)} ms/flow ` +
      `(wall time inside the executor, waits included); outside the executor ${f(backends - inStatements)} ms/flow.`,
    `pg_stat_wal per flow: ${f(Number(r.wal.wal_records), 1)} records, ${f(Number(r.wal.wal_fpi), 2)} full-page images, ` +
      `${f(Number(r.wal.wal_bytes), 0)} bytes, ${f(Number(r.wal.wal_write), 2)} writes (${f(Number(r.wal.wal_write_time))} ms), ` +
      `${f(Number(r.wal.wal_sync), 2)} syncs (${f(Number(r.wal.wal_sync_time))} ms)`,
    '',
    markdownTable(
      'statement|calls / flow|plans / call|plan ms / flow|exec ms / flow|exec ms / call|buffers / flow|WAL rec / flow|WAL bytes / flow'.split(
        '|',
      ),
      r.statements
        .filter((s) => s.calls / r.flows >= 0.005)
        .map((s) => [
          `\`${s.query}\``,
          f(s.calls, 2),
          (s.plans / Math.max(1, s.calls)).toFixed(2),
          f(s.planMs),
          f(s.execMs),
          (s.execMs / Math.max(1, s.calls)).toFixed(3),
          f(s.buffers, 1),
          f(s.walRecords, 1),
          f(s.walBytes, 0),
        ]),
    ),
    '',
    'WAL records per flow by relation (pg_walinspect; Btree INSERT_LEAF = one index entry):',
    markdownTable(
      ['relation', 'rmgr', 'record', 'records / flow', 'bytes / flow', 'FPI bytes / flow'],
      r.walRecords
        .filter((w) => w.records / r.flows >= 0.05)
        .map((w) => [w.relation, w.resourceManager, w.recordType, f(w.records, 2), f(w.bytes, 0), f(w.fpiBytes, 0)]),
    ),
    '',
    'Row writes per flow (pg_stat_user_tables over the window):',
    markdownTable(
      ['table', 'indexes', 'inserts', 'updates', 'of them HOT', 'deletes', 'seq scans', 'rows seq-read', 'index scans'],
      r.tables
        .filter((t) => t.ins + t.upd + t.del + t.seq + t.idx > 0)
        .map((t) => [
          t.table,
          String(t.indexes),
          ...[t.ins, t.upd, t.hot, t.del, t.seq].map((n) => f(n, 2)),
          f(t.seqRead, 1),
          f(t.idx, 2),
        ]),
    ),
  ];
  return lines.join('\n');
}

await main();
