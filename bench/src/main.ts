import { availableParallelism } from 'node:os';
import { createObserverRole } from './observer-role.ts';
import { prepareTemplateDatabase } from './prepare-template-database.ts';
import { benchElapsedMs, progress } from './progress.ts';
import { renderReport } from './render-report.ts';
import { runDeliveryPhase } from './run-delivery-phase.ts';
import { runLatencyPhase } from './run-latency-phase.ts';
import { runPgbenchCeiling } from './run-pgbench-ceiling.ts';
import { runPgliteFloor } from './run-pglite-floor.ts';
import { runThroughputPhase, type PhaseSetup } from './run-throughput-phase.ts';
import { startBenchCluster } from './start-bench-cluster.ts';
import { withPgClient } from './with-pg-client.ts';

// `pnpm bench`: one run, about two minutes on a 2-core machine. Progress on stderr, the report
// (markdown) on stdout. Nothing here is a pass/fail threshold. `--no-pglite` skips the last section.
const plan = {
  ceilingSeconds: 10,
  latency: { flows: 500, warmup: 20, pollMs: 2 },
  throughput: [
    { concurrency: 1, startForMs: 15_000, starters: 1, maxOpen: 50 },
    { concurrency: 32, startForMs: 15_000, starters: 4, maxOpen: 4 * 32 + 50 },
  ],
  deliveries: [
    { concurrency: 1, forMs: 8_000 },
    { concurrency: 8, forMs: 8_000 },
  ],
  pgliteRuns: process.argv.includes('--no-pglite') ? 0 : 200,
};

progress('starting a throwaway PostgreSQL 15 cluster (@sagaflow/test-postgres)');
const { cluster, statements } = await startBenchCluster();
let measured: Omit<Parameters<typeof renderReport>[0], 'pglite' | 'wallMs'>;
try {
  const serverVersion = await withPgClient(cluster.adminUrl, async (c) => {
    const { rows } = await c.query<{ v: string; settings: string }>(
      `select current_setting('server_version') as v,
              string_agg(name || '=' || current_setting(name), ', ' order by name) as settings
         from pg_settings where name in ('fsync', 'synchronous_commit', 'full_page_writes', 'shared_buffers')`,
    );
    return `PostgreSQL ${rows[0]?.v ?? '?'} (${rows[0]?.settings ?? '?'})`;
  });
  await createObserverRole(cluster.adminUrl);
  progress('migrating the template database');
  const template = 'bench_template';
  await prepareTemplateDatabase(cluster.adminUrl, template);
  const setup: PhaseSetup = {
    adminUrl: cluster.adminUrl,
    template,
    statementsEnabled: statements.enabled,
    dataDir: cluster.dataDir,
  };

  progress(`ceiling: pgbench, 4 clients, ${plan.ceilingSeconds} s`);
  const ceiling = await runPgbenchCeiling(cluster, plan.ceilingSeconds);
  progress(`ceiling: ${ceiling.tps.toFixed(0)} tps`);
  const latency = await runLatencyPhase(setup, plan.latency);
  const throughput = [];
  for (const phase of plan.throughput) throughput.push(await runThroughputPhase(setup, phase));
  const deliveries = [];
  for (const phase of plan.deliveries) deliveries.push(await runDeliveryPhase(setup, phase));
  measured = {
    environment:
      `${new Date().toISOString()} · Node ${process.version} · ${availableParallelism()} CPUs · ${serverVersion}, ` +
      'a throwaway cluster on 127.0.0.1 (TCP) shared by the engine, the ceiling and the bench.',
    statementTracking: statements,
    ceiling,
    throughput,
    latency,
    deliveries,
  };
} finally {
  progress('stopping the cluster');
  await cluster.stop();
}
const pglite = plan.pgliteRuns > 0 ? await runPgliteFloor(plan.pgliteRuns) : null;
const wallMs = benchElapsedMs();
progress(`done in ${(wallMs / 1000).toFixed(1)} s`);
process.stdout.write(renderReport({ ...measured, pglite, wallMs }));
