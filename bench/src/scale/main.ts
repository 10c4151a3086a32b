/**
 * `npm run bench -- scale [--runs 1000000] [--repeat 20] [--backlog 100000] [--publisher-seconds 90]
 * [--no-browser]` (issue 12
 * §4, ADR 0032): seeds a console's history at scale on a throwaway PostgreSQL 15, then measures every
 * console query in the database (plans flagged) and over HTTP against a real control plane, its peak
 * RSS, the console in Chromium (issue 10's performance item), and the sweeps draining backlogs.
 * Progress on stderr; the report on stdout and in bench/results/<time>-scale-<runs>.{md,json}.
 */
import { existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseEnv, startControlPlane } from '@sagaflow/control';
import { createDatabase, migrate } from '@sagaflow/engine';
import { createDatabase as createPgDatabase, startCluster } from '@sagaflow/test-postgres';
import { progress } from '../progress.ts';
import { writeBenchResults } from '../write-bench-results.ts';
import { signInConsole } from './console-http.ts';
import { consoleQueries } from './console-queries.ts';
import { measureBacklogs } from './measure-backlogs.ts';
import { measureInDatabase } from './measure-in-database.ts';
import { measureOverHttp } from './measure-over-http.ts';
import { renderScaleReport, type ScaleReport } from './render-scale-report.ts';
import { pickSamples, seedConsoleScale } from './seed-console-scale.ts';
import { spawnControlPlane } from './spawn-control-plane.ts';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
/** The e2e console stack signs in as its first admin with this password (e2e/fixtures/accounts.ts). */
const adminPassword = 'e2e admin password';

const { values } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== 'scale' && a !== '--'),
  options: {
    runs: { type: 'string', default: '1000000' },
    repeat: { type: 'string', default: '20' },
    backlog: { type: 'string', default: '100000' },
    'publisher-seconds': { type: 'string', default: '90' },
    'no-browser': { type: 'boolean', default: false },
  },
  strict: true,
});
const whole = (name: string, text: string, min: number) => {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) {
    process.stderr.write(`bench scale: --${name} must be a whole number of at least ${min}, not ${text}\n`);
    process.exit(2);
  }
  return n;
};
const runs = whole('runs', values.runs, 1000);
const repeat = whole('repeat', values.repeat, 1);
const backlog = whole('backlog', values.backlog, 1);
const publisherSeconds = whole('publisher-seconds', values['publisher-seconds'], 1);

/** Runs the e2e package's browser script against the database; its JSON, or why it could not run. */
async function measureBrowser(url: string, runId: string) {
  if (!existsSync(`${repoRoot}apps/web/.next/BUILD_ID`))
    return { browser: null, browserError: 'the console is not built (pnpm --filter @sagaflow/web run build)' };
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/console-first-data.ts'], {
    cwd: `${repoRoot}e2e`,
    env: { ...process.env, SCALE_DATABASE_URL: url, SCALE_RUN_ID: runId },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) return { browser: null, browserError: `the browser script exited ${code}` };
  return { browser: JSON.parse(out) as NonNullable<ScaleReport['browser']>, browserError: null };
}

const startedAt = new Date();
const cluster = await startCluster({ log: (line) => progress(`test-postgres: ${line}`) });
try {
  const url = await createPgDatabase(cluster.adminUrl, 'bench_scale');
  const db = await createDatabase({ kind: 'postgres', url, poolSize: 4 });
  try {
    await migrate(db);
    progress(`seeding ${runs.toLocaleString('en')} runs…`);
    const seedStart = performance.now();
    const seed = await seedConsoleScale(db.driver, { runs, onProgress: progress });
    progress('vacuum analyze…');
    await db.driver.exec('vacuum analyze');
    const seedSeconds = (performance.now() - seedStart) / 1000;
    const tables = await db.driver.query<{ table: string; rows: number }>(
      `select relname as table, reltuples::bigint::int as rows from pg_class
        where relnamespace = 'sagaflow'::regnamespace and relkind = 'r' and reltuples > 0 order by reltuples desc`,
    );
    const [size] = await db.driver.query<{ mb: number }>(
      `select pg_database_size(current_database()) / 1048576.0 as mb`,
    );
    const samples = await pickSamples(db.driver, seed);
    const queries = consoleQueries(samples);

    // In the database: the statements each call sends, captured from a control plane in this process.
    const inProcess = await startControlPlane(
      parseEnv({
        DATABASE_URL: url,
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_ADMIN_PASSWORD: adminPassword,
        SAGAFLOW_MONITOR_INTERVAL_MS: '3600000',
      }),
    );
    let inDatabase;
    try {
      const api = await signInConsole(inProcess.url, 'admin', adminPassword);
      inDatabase = await measureInDatabase(url, api, queries, repeat, progress);
    } finally {
      await inProcess.stop();
    }

    // Over HTTP, against a control plane in its own process (its default loops running), and its RSS.
    const plane = await spawnControlPlane(url, { ...process.env, SAGAFLOW_ADMIN_PASSWORD: adminPassword });
    let overHttp;
    let peakRss;
    const idleRss = plane.rssMb();
    progress(`control plane RSS once started: ${idleRss.toFixed(0)} MB`);
    try {
      overHttp = await measureOverHttp(
        await signInConsole(plane.url, 'admin', adminPassword),
        queries,
        repeat,
        progress,
      );
      peakRss = plane.peakRssMb();
      progress(`control plane peak RSS: ${peakRss.toFixed(0)} MB`);
    } finally {
      await plane.stop();
    }

    const browser = values['no-browser']
      ? { browser: null, browserError: '--no-browser' }
      : await measureBrowser(url, samples.runId);
    const backlogs = await measureBacklogs(db, backlog, publisherSeconds * 1000, progress);

    const report: ScaleReport = {
      startedAt: startedAt.toISOString(),
      runs,
      repeat,
      seed: {
        seconds: seedSeconds,
        databaseSizeMb: Number(size?.mb ?? NaN),
        rows: Object.fromEntries(tables.map((t) => [t.table, t.rows])),
      },
      inDatabase,
      overHttp,
      controlPlaneIdleRssMb: idleRss,
      controlPlanePeakRssMb: peakRss,
      backlogs,
      ...browser,
      machine: { cpus: availableParallelism(), loadAverage: loadavg() },
    };
    const markdown = renderScaleReport(report);
    process.stdout.write(markdown);
    const files = await writeBenchResults(
      `${repoRoot}bench/results`,
      startedAt,
      false,
      markdown,
      report,
      `scale-${runs}`,
    );
    progress(`wrote ${files.join(', ')}`);
  } finally {
    await db.close();
  }
} finally {
  await cluster.stop();
}
