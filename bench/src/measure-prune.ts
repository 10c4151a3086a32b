import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createDatabase, createEngine, migrate, type PruneProgress, type PruneReport } from '@sagaflow/engine';
import { seedHistory } from '@sagaflow/engine/testing';
import { createDatabase as createPgDatabase, startCluster } from '@sagaflow/test-postgres';
import { pino } from 'pino';
import { markdownTable } from './markdown-table.ts';
import { percentile } from './percentile.ts';
import { progress } from './progress.ts';
import { logOffset, readSampledPlans, type SampledPlans } from './read-sampled-plans.ts';
import { durableSettings, withDurableServer } from './with-durable-server.ts';
import { withPgClient } from './with-pg-client.ts';

// `pnpm --filter @sagaflow/bench run bench:prune [-- --runs N --batch-sizes 500,2000]`: how fast
// retention (ADR 0027) deletes by index in batches, and whether a batch stays as cheap at the end of
// the walk as at its start. Seeds with set-based SQL (fsync off), prunes with durable commits.
// A measurement, not a test: nothing here passes or fails. Report on stdout and in bench/results/.

const { values } = parseArgs({
  // pnpm passes the `--` that separates its own options on.
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: { runs: { type: 'string', default: '200000' }, 'batch-sizes': { type: 'string', default: '500' } },
});
const runs = Number(values.runs);
const batchSizes = values['batch-sizes'].split(',').map(Number);
if (!Number.isSafeInteger(runs) || runs < 100 || batchSizes.some((b) => !Number.isSafeInteger(b) || b < 1))
  throw new Error('--runs must be a whole number of at least 100, --batch-sizes whole numbers');

const day = 86_400_000;
const now = Date.now();
const old = new Date(now - 40 * day);
const recent = new Date(now - day);

/** The history a prune walks: old finished runs (deleted) among recent and open ones (kept), and the rest. */
async function seed(url: string): Promise<void> {
  const db = await createDatabase({ kind: 'postgres', url, poolSize: 2 });
  try {
    await migrate(db);
    const cohorts = [
      { tag: 'old-done', at: old, runs },
      { tag: 'old-open', at: old, runs: runs / 20, runState: 'open' as const },
      { tag: 'new-done', at: recent, runs: runs / 10 },
      { tag: 'old-instance', at: old, instances: runs / 5, inbox: runs / 2 },
      { tag: 'active-instance', at: old, instances: runs / 20, instanceStatus: 'ACTIVE' as const, inbox: runs / 20 },
      { tag: 'old-published', at: old, outbox: runs },
      { tag: 'new-published', at: recent, outbox: runs / 10 },
    ];
    for (const cohort of cohorts) {
      const started = performance.now();
      await seedHistory(db.driver, cohort);
      progress(`seeded ${cohort.tag} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
    await db.driver.exec('vacuum analyze');
  } finally {
    await db.close();
  }
}

async function sizes(url: string): Promise<Record<string, { rows: number; mb: number }>> {
  return withPgClient(url, async (c) => {
    const r = await c.query<{ table: string; rows: string; bytes: string }>(`
      select c.relname as table, c.reltuples::bigint::text as rows, pg_total_relation_size(c.oid)::text as bytes
        from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'sagaflow' and c.relkind = 'r'
         and c.relname in ('flow_runs','action_runs','compensation_runs','flow_events','signals','timers','jobs',
                           'process_transitions','outbox','inbox')
       order by c.relname`);
    return Object.fromEntries(
      r.rows.map((x) => [x.table, { rows: Number(x.rows), mb: Math.round(Number(x.bytes) / 1_048_576) }]),
    );
  });
}

interface Measured {
  batchSize: number;
  plans: SampledPlans;
  report: PruneReport;
  /** Per phase: batch durations (ms), in order. */
  batchMs: Record<string, number[]>;
}

async function measure(url: string, batchSize: number, serverLog: string): Promise<Measured> {
  const from = await logOffset(serverLog);
  const db = await createDatabase({ kind: 'postgres', url, poolSize: 2 });
  const engine = createEngine({ db, flows: [], actions: [], logger: pino({ level: 'warn' }) });
  const batchMs: Record<string, number[]> = {};
  let last = 0;
  let lastLine = 0;
  try {
    const report = await engine.retention.prune({ olderThanSeconds: 30 * 86_400, batchSize }, (p: PruneProgress) => {
      (batchMs[p.phase] ??= []).push(p.elapsedMs - last);
      last = p.elapsedMs;
      if (p.elapsedMs - lastLine > 5000) {
        lastLine = p.elapsedMs;
        progress(`batch ${batchSize}: ${p.phase}: ${p.done} rows done, ${p.left} left, ${p.rowsPerSecond} rows/s`);
      }
    });
    return { batchSize, report, batchMs, plans: await readSampledPlans(serverLog, from) };
  } finally {
    await db.close();
  }
}

const ms = (n: number | undefined) => (n === undefined ? '–' : n.toFixed(0));
function render(
  seedMs: number,
  before: Awaited<ReturnType<typeof sizes>>,
  results: { m: Measured; after: typeof before }[],
): string {
  const lines = [
    `# Retention: batched deletes by index (${new Date(now).toISOString()})`,
    '',
    `${runs} old finished runs (5 steps, 7 events; on every fourth a compensation, a signal, a timer and a job), ` +
      `${runs / 20} old open runs and ${runs / 10} recent finished runs kept; ${runs / 5} old completed instances ` +
      `(5 transitions) and ${runs / 20} active ones (kept); ${runs} old published outbox rows, ${runs / 10} recent; ` +
      `${runs / 2 + runs / 20} inbox records. Seeded in ${(seedMs / 1000).toFixed(0)} s (fsync off); pruned with durable ` +
      `commits (${durableSettings.join(', ')}), 30-day cutoff, on a throwaway PostgreSQL 15 on this machine ` +
      `(2 cores shared with other work: figures are indicative).`,
    '',
    '## Before',
    '',
    markdownTable(
      ['table', 'rows (estimate)', 'MB'],
      Object.entries(before).map(([t, s]) => [t, String(s.rows), String(s.mb)]),
    ),
  ];
  for (const { m, after } of results) {
    const r = m.report;
    lines.push(
      '',
      `## Batch size ${m.batchSize}`,
      '',
      `${r.total} rows deleted in ${(r.elapsedMs / 1000).toFixed(1)} s: **${r.rowsPerSecond} rows/s** overall, ` +
        `${r.batches} batches (one transaction each).`,
      '',
      markdownTable(
        ['phase', 'batches', 'p50 ms', 'p95 ms', 'max ms', 'first 10 mean ms', 'last 10 mean ms'],
        Object.entries(m.batchMs).map(([phase, xs]) => {
          const mean = (ys: number[]) => (ys.length ? ys.reduce((a, b) => a + b, 0) / ys.length : undefined);
          return [
            phase,
            String(xs.length),
            ms(percentile(xs, 50)),
            ms(percentile(xs, 95)),
            ms(Math.max(...xs)),
            ms(mean(xs.slice(0, 10))),
            ms(mean(xs.slice(-11, -1))),
          ];
        }),
      ),
      '',
      `Sampled plans (auto_explain, 1 statement in 20): ${m.plans.plans}; indexes read: ` +
        (Object.entries(m.plans.indexes)
          .map(([i, n]) => `\`${i}\` ×${n}`)
          .join(', ') || 'none') +
        '; sequential scans of a retention table: ' +
        (Object.entries(m.plans.seqScans)
          .map(([t, n]) => `**${t} ×${n}**`)
          .join(', ') || 'none') +
        '.',
      '',
      ...m.plans.seqScanStatements.map((q) => `- sequential scan in: \`${q}…\``),
      '',
      markdownTable(
        ['table', 'deleted', 'MB after (space is reused, not returned, until VACUUM FULL)'],
        Object.entries(r.deleted).map(([t, n]) => [t, String(n), String(after[t]?.mb ?? '–')]),
      ),
    );
  }
  return `${lines.join('\n')}\n`;
}

const cluster = await startCluster({ log: (line) => progress(`test-postgres: ${line}`) });
try {
  const template = await createPgDatabase(cluster.adminUrl, 'prune_template');
  const seedStarted = performance.now();
  await seed(template);
  const seedMs = performance.now() - seedStarted;
  const before = await sizes(template);
  const results = [];
  for (const batchSize of batchSizes) {
    const name = `prune_${batchSize}`;
    const url = await createPgDatabase(cluster.adminUrl, name, { template: 'prune_template' });
    // One statement in 20 has its plan logged (auto_explain, no ANALYZE: next to no overhead), to
    // show which indexes the batches read and that none scans a big table whole.
    await withPgClient(cluster.adminUrl, async (c) => {
      await c.query(`alter database ${name} set session_preload_libraries = 'auto_explain'`);
      await c.query(`alter database ${name} set auto_explain.log_min_duration = 0`);
      await c.query(`alter database ${name} set auto_explain.sample_rate = 0.05`);
    });
    const m = await withDurableServer(cluster, () => measure(url, batchSize, join(cluster.dataDir, 'server.log')));
    results.push({ m, after: await sizes(url) });
    progress(
      `batch ${batchSize}: ${m.report.total} rows in ${m.report.elapsedMs} ms, ${m.report.rowsPerSecond} rows/s`,
    );
  }
  const markdown = render(seedMs, before, results);
  process.stdout.write(markdown);
  const dir = fileURLToPath(new URL('../results/', import.meta.url));
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${new Date(now).toISOString().slice(0, 16).replace(':', '').replace('T', '-')}Z-prune.md`);
  await writeFile(file, markdown);
  progress(`wrote ${file}`);
} finally {
  await cluster.stop();
}
