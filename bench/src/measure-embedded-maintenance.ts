import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDatabase, createEngine, migrate, type Database } from '@sagaflow/engine';
import { pino } from 'pino';
import { createBenchFlow } from './bench-flow.ts';
import { progress } from './progress.ts';
import { closedLoopFigures, runClosedLoop } from './run-closed-loop.ts';
import { driveEngine } from './sagaflow-peer.ts';

/**
 * What the embedded maintenance (ADR 0050) costs and buys on PGlite, in two parts:
 *
 * - `vacuum`: the maintenance's `VACUUM (ANALYZE)` of a table holding `--rows` dead row versions
 *   (flow_runs updated once, every index touched; jobs inserted and deleted), in memory and on a
 *   data directory, with how long a `select 1` queued right behind it waited: PGlite runs one
 *   statement at a time, so that wait is what the hot path pays.
 * - `loop`: the bench's 3-step flow in a closed loop of `--concurrency` on a fresh data directory
 *   for `--seconds`, with the maintenance every `--interval-ms` and with it off: flows/s, p50/p99,
 *   the data directory's size and the hot tables' dead row versions at the end.
 *
 * `pnpm --filter @sagaflow/bench run bench:maintenance [--part vacuum|loop|both]`
 */
const { values: args } = parseArgs({
  options: {
    part: { type: 'string', default: 'both' },
    rows: { type: 'string', default: '100000' },
    /** flow_runs rows written Completed beside the dead ones and left alone: a big table with a fifth of it dead. */
    live: { type: 'string', default: '0' },
    stores: { type: 'string', default: 'memory,data-dir' },
    seconds: { type: 'string', default: '60' },
    concurrency: { type: 'string', default: '8' },
    'interval-ms': { type: 'string', default: '15000' },
    /** `info` shows the maintenance's line per table. */
    'log-level': { type: 'string', default: 'warn' },
  },
});
const quiet = pino({ level: args['log-level'] }, pino.destination(2));

async function withPglite<T>(store: 'memory' | 'data-dir', use: (db: Database, dir?: string) => Promise<T>) {
  const dir = store === 'data-dir' ? await mkdtemp(join(tmpdir(), 'sagaflow-maint-')) : undefined;
  const db = await createDatabase({ kind: 'pglite', dataDir: dir });
  try {
    await migrate(db);
    return await use(db, dir);
  } finally {
    await db.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  return total;
}

const mib = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MiB`;

async function measureVacuum(rows: number, live: number, stores: string[]): Promise<void> {
  console.log(`\n## One pass over ${rows} dead row versions (flow_runs also holding ${live} live rows)\n`);
  console.log('| store | table | how the rows died | `VACUUM (ANALYZE)` ms | `select 1` queued behind it waited ms |');
  console.log('|---|---|---|---|---|');
  for (const store of stores as ('memory' | 'data-dir')[]) {
    await withPglite(store, async (db) => {
      const seedRuns = (
        status: string,
        n: number,
      ) => `insert into sagaflow.flow_runs (flow_name, flow_version, status, input)
        select 'maint', 1, '${status}', jsonb_build_object('n', g, 'pad', repeat('x', 100)) from generate_series(1, ${n}) g`;
      const churn = [
        {
          table: 'flow_runs',
          how: 'updated once (status, output, timestamps)',
          sql: [
            ...(live > 0 ? [seedRuns('Completed', live), 'VACUUM (ANALYZE) sagaflow.flow_runs'] : []),
            seedRuns('Running', rows),
            `update sagaflow.flow_runs set status = 'Completed', output = '{"ok":true}', finished_at = now(), updated_at = now()
              where status = 'Running'`,
          ],
        },
        {
          table: 'jobs',
          how: 'inserted and deleted',
          sql: [
            `insert into sagaflow.jobs (kind, payload) select 'run-action', '{}' from generate_series(1, ${rows})`,
            `delete from sagaflow.jobs`,
          ],
        },
      ];
      for (const c of churn) {
        for (const sql of c.sql) await db.driver.exec(sql);
        // The statement the maintenance sends for a due table, then one queued right behind it.
        const began = performance.now();
        const vacuuming = db.driver.exec(`VACUUM (ANALYZE) sagaflow.${c.table}`);
        await db.driver.query('select 1');
        const waited = performance.now() - began;
        await vacuuming;
        const ms = performance.now() - began;
        console.log(`| ${store} | ${c.table} | ${c.how} | ${ms.toFixed(0)} | ${waited.toFixed(0)} |`);
      }
    });
  }
}

async function measureLoop(seconds: number, concurrency: number, intervalMs: number): Promise<void> {
  console.log(`\n## ${seconds} s closed loop, c=${concurrency}, PGlite data directory\n`);
  console.log(
    '| maintenance | flows | flows/s | p50 ms | p99 ms | passes (vacuums / analyzes) | engine tables and indexes | data dir | dead row versions left (flow_runs, action_runs, jobs, flow_events) |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const enabled of [true, false]) {
    await withPglite('data-dir', async (db, dir) => {
      const bench = createBenchFlow();
      const engine = createEngine({
        db,
        flows: [bench.flow],
        actions: [bench.action],
        config: { worker: { concurrency }, maintenance: { enabled, interval_ms: intervalMs } },
        logger: quiet,
      });
      const peer = driveEngine(bench, db, engine);
      // In-process starts of in-process steps on PGlite are one unbroken chain of promises: no timer
      // fires (a 100 ms interval ticked 0 times in 15 s), so no timer-driven loop would either. A
      // host's starts arrive as I/O; each client here yields to the event loop between flows.
      const runOne = async (n: number) => {
        await new Promise((resolve) => setImmediate(resolve));
        await peer.runOne(n);
      };
      progress(`closed loop, maintenance ${enabled ? 'on' : 'off'}: warming up, then ${seconds} s`);
      const warmup = await runClosedLoop(concurrency, 5_000, runOne);
      const loop = await runClosedLoop(concurrency, seconds * 1000, runOne);
      await engine.stopWorkers();
      const figures = closedLoopFigures(warmup, loop);
      const dead = await db.driver.query<{ table: string; dead: number }>(
        `select relname as table, n_dead_tup::int as dead from pg_stat_user_tables
          where schemaname = 'sagaflow' and relname in ('flow_runs', 'action_runs', 'jobs', 'flow_events')`,
      );
      const deadOf = (t: string) => dead.find((d) => d.table === t)?.dead ?? 0;
      const [tables] = await db.driver.query<{ bytes: string }>(
        `select sum(pg_total_relation_size(relid))::text as bytes from pg_stat_user_tables where schemaname = 'sagaflow'`,
      );
      await db.driver.exec('CHECKPOINT');
      const size = dir ? await dirBytes(dir) : 0;
      const c = engine.maintenance.counters();
      console.log(
        `| ${enabled ? `every ${intervalMs / 1000} s` : 'off'} | ${figures.flows} | ${figures.flowsPerSecond.toFixed(1)} | ` +
          `${figures.latencyP50Ms.toFixed(1)} | ${figures.latencyP99Ms.toFixed(1)} | ${c.passes} (${c.vacuums} / ${c.analyzes}) | ` +
          `${mib(Number(tables?.bytes ?? 0))} | ${mib(size)} | ${['flow_runs', 'action_runs', 'jobs', 'flow_events'].map(deadOf).join(', ')} |`,
      );
    });
  }
}

const part = args.part;
if (part === 'vacuum' || part === 'both')
  await measureVacuum(Number(args.rows), Number(args.live), args.stores.split(','));
if (part === 'loop' || part === 'both')
  await measureLoop(Number(args.seconds), Number(args.concurrency), Number(args['interval-ms']));
