import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { warmupFlowsBeforeAnalyze } from './analyze-like-autovacuum.ts';
import { BenchOptionError, parseBenchOptions } from './bench-options.ts';
import { dbosPeer } from './dbos-peer.ts';
import { floorPeer } from './floor-peer.ts';
import { createObserverRole } from './observer-role.ts';
import { sagaflowPeer } from './sagaflow-peer.ts';
import { progress, benchElapsedMs } from './progress.ts';
import { readServerSettings } from './read-server-settings.ts';
import type { PeerModeReport } from './render-peer-comparison.ts';
import { renderPeerMode } from './render-peer-comparison.ts';
import { noiseWarning, renderPeerReport } from './render-peer-report.ts';
import { renderReport } from './render-report.ts';
import { runDeliveryPhase } from './run-delivery-phase.ts';
import { runLatencyPhase } from './run-latency-phase.ts';
import { runPeerPhase, type DurabilityMode, type PeerPhaseResult } from './run-peer-phase.ts';
import { runPgbenchCeilings } from './run-pgbench-ceiling.ts';
import { runPglitePhases, type PglitePhaseResult } from './run-pglite-phase.ts';
import { runScaleOut, type ReplicaResult } from './run-replica-phase.ts';
import { renderPgliteSection } from './render-pglite-section.ts';
import { renderReplicaSection } from './render-replica-section.ts';
import { runThroughputPhase, type PhaseSetup } from './run-throughput-phase.ts';
import { startBenchCluster } from './start-bench-cluster.ts';
import { summariseMode } from './summarise-peer-comparison.ts';
import { withDurableServer } from './with-durable-server.ts';
import { updateReadmeTable, writeBenchResults } from './write-bench-results.ts';

// `npm run bench`: Sagaflow and DBOS Transact side by side, durable commits then fsync off, then
// Sagaflow alone (where its time goes). Progress on stderr, the report (markdown) on stdout and in
// bench/results/. Nothing here is a pass/fail threshold. `--quick` is a smoke run.
let options;
try {
  options = parseBenchOptions(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof BenchOptionError)) throw error;
  process.stderr.write(`bench: ${error.option}: ${error.message}\n`);
  process.exit(2);
}
const startedAt = new Date();
const plan = {
  rounds: options.rounds,
  concurrencies: [1, 8, 32],
  warmupMs: options.quick ? 300 : 3_000,
  // Before its ANALYZE, a phase's warm-up leaves at least this many runs (ADR 0086).
  warmupFlows: options.quick ? 0 : warmupFlowsBeforeAnalyze,
  measureMs: { durable: options.quick ? 1_500 : 5_000, 'fsync-off': options.quick ? 1_000 : 3_000 },
  ceilingClients: [1, 4, 16],
  ceilingSeconds: options.quick ? 2 : 5,
  latency: { flows: 500, warmup: 20, pollMs: 2 },
  throughput: [
    { concurrency: 1, startForMs: 15_000, starters: 1, maxOpen: 50 },
    { concurrency: 32, startForMs: 15_000, starters: 4, maxOpen: 4 * 32 + 50 },
  ],
  deliveries: [
    { concurrency: 1, forMs: 8_000 },
    { concurrency: 8, forMs: 8_000 },
  ],
  pglite: { concurrencies: [1, 8], warmupMs: options.quick ? 300 : 1_000, measureMs: options.quick ? 1_500 : 5_000 },
  scaleOut: {
    processes: [1, 2, 4],
    concurrencyPerProcess: 8,
    backlog: 64,
    starters: 4,
    warmupMs: options.quick ? 500 : 2_000,
    measureMs: options.quick ? 2_000 : 8_000,
  },
};
const planLine =
  `Plan: ${plan.rounds} round(s) per mode at c = ${plan.concurrencies.join(', ')}; per phase ${plan.warmupMs / 1000} s ` +
  `warm-up${plan.warmupFlows > 0 ? ` (the first one at least ${plan.warmupFlows} flows)` : ''}, ANALYZE, ${plan.warmupMs / 1000} s warm-up again, then ${plan.measureMs.durable / 1000} s (durable) / ${plan.measureMs['fsync-off'] / 1000} s (fsync off) ` +
  `measured; pgbench ${plan.ceilingSeconds} s per client count${options.quick ? ' (--quick: a smoke run)' : ''}` +
  `${options.notify ? '' : "; Sagaflow's pool polls alone (--no-notify: worker.notify false)"}` +
  `; the floor (four autocommitted statements per flow, ADR 0090) at c = ${plan.concurrencies[0]} only.`;

// The floor (four autocommitted statements per flow, ADR 0090) runs at one client only: it is what a
// client pays there for Sagaflow's four commits in sequence, the figure c=1's targets are read against.
const systems = [sagaflowPeer({ notify: options.notify }), dbosPeer, floorPeer];
const runsAt = (system: (typeof systems)[number], concurrency: number) =>
  system.name !== 'Floor' || concurrency === plan.concurrencies[0];
const templates = { Sagaflow: 'sagaflow_template', DBOS: 'dbos_template', Floor: 'floor_template' } as const;

progress('starting a throwaway PostgreSQL 15 cluster (@sagaflow/test-postgres)');
const { cluster, statements } = await startBenchCluster();
const phases: PeerPhaseResult[] = [];
const modes: PeerModeReport[] = [];
let alone: Omit<Parameters<typeof renderReport>[0], 'wallMs'> | null = null;
const replicas: ReplicaResult[] = [];
let pglite: PglitePhaseResult[] = [];
try {
  await createObserverRole(cluster.adminUrl);
  for (const system of systems) {
    progress(`preparing ${system.name}'s template database`);
    await system.prepareTemplate(cluster.adminUrl, templates[system.name]);
  }
  const runMode = async (mode: DurabilityMode): Promise<PeerModeReport> => {
    const server = await readServerSettings(cluster.adminUrl);
    progress(`${mode}: ${server}`);
    progress(`${mode}: pgbench at ${plan.ceilingClients.join('/')} clients, ${plan.ceilingSeconds} s each`);
    const ceilings = await runPgbenchCeilings(cluster, {
      name: `pgbench_${mode.replace('-', '_')}`,
      clients: plan.ceilingClients,
      seconds: plan.ceilingSeconds,
    });
    progress(`${mode}: pgbench ${ceilings.map((c) => `${c.tps.toFixed(0)} tps at ${c.clients}`).join(', ')}`);
    const results: PeerPhaseResult[] = [];
    for (let round = 1; round <= plan.rounds; round++) {
      for (const concurrency of plan.concurrencies) {
        for (const system of systems.filter((s) => runsAt(s, concurrency))) {
          results.push(
            await runPeerPhase(system, {
              adminUrl: cluster.adminUrl,
              dataDir: cluster.dataDir,
              statementsEnabled: statements.enabled,
              mode,
              round,
              concurrency,
              warmupMs: plan.warmupMs,
              warmupFlows: plan.warmupFlows,
              measureMs: plan.measureMs[mode],
              template: templates[system.name],
              notify: options.notify,
            }),
          );
        }
      }
    }
    phases.push(...results);
    const four = ceilings.find((c) => c.clients === 4)?.tps ?? null;
    return { summary: summariseMode(results, mode, four), server, ceilings };
  };
  progress('durable: restarting the server with fsync and synchronous_commit on');
  modes.push(
    await withDurableServer(cluster, async () => {
      const durable = await runMode('durable');
      if (options.scaleOut) {
        const setup = { adminUrl: cluster.adminUrl, template: templates.Sagaflow, dataDir: cluster.dataDir };
        replicas.push(...(await runScaleOut({ ...plan.scaleOut, ...setup })));
      }
      return durable;
    }),
  );
  const fsyncOff = await runMode('fsync-off');
  modes.push(fsyncOff);

  if (options.sagaflowAlone) {
    const ceiling = fsyncOff.ceilings.find((c) => c.clients === 4);
    if (!ceiling) throw new Error('the fsync-off pgbench ceiling at 4 clients is missing');
    const setup: PhaseSetup = {
      adminUrl: cluster.adminUrl,
      template: templates.Sagaflow,
      statementsEnabled: statements.enabled,
      dataDir: cluster.dataDir,
    };
    const latency = await runLatencyPhase(setup, plan.latency);
    const throughput = [];
    for (const phase of plan.throughput) throughput.push(await runThroughputPhase(setup, phase));
    const deliveries = [];
    for (const phase of plan.deliveries) deliveries.push(await runDeliveryPhase(setup, phase));
    alone = {
      environment: `${fsyncOff.server}; the same cluster as above.`,
      statementTracking: statements,
      ceiling,
      throughput,
      latency,
      deliveries,
    };
  }
} finally {
  progress('stopping the cluster');
  await cluster.stop();
}
if (options.pglite) pglite = await runPglitePhases(plan.pglite);
const wallMs = benchElapsedMs();
progress(`done in ${(wallMs / 1000).toFixed(1)} s`);

const environment =
  `${startedAt.toISOString()} · Node ${process.version} · ${availableParallelism()} CPUs · one throwaway PostgreSQL 15 ` +
  `cluster on 127.0.0.1 (TCP) shared by both systems, pgbench and the bench · @dbos-inc/dbos-sdk 5.3.0 · ` +
  `bench wall time ${(wallMs / 1000).toFixed(0)} s.`;
const peerMarkdown = renderPeerReport({ environment, plan: planLine, modes, phases });
const durableServer = modes.find((m) => m.summary.mode === 'durable')?.server ?? '';
const markdown = [
  peerMarkdown,
  ...(pglite.length > 0
    ? [
        renderPgliteSection(
          pglite,
          modes.map((m) => m.summary),
        ),
        '',
      ]
    : []),
  ...(replicas.length > 0 ? [renderReplicaSection(replicas, durableServer), ''] : []),
  ...(alone ? [renderReport({ ...alone, wallMs })] : []),
].join('\n');
process.stdout.write(markdown);

const benchDir = dirname(dirname(fileURLToPath(import.meta.url)));
const written = await writeBenchResults(join(benchDir, 'results'), startedAt, options.quick, markdown, {
  startedAt: startedAt.toISOString(),
  wallMs,
  options,
  plan,
  modes: modes.map((m) => ({ mode: m.summary.mode, server: m.server, ceilings: m.ceilings, summary: m.summary })),
  phases,
  pglite,
  scaleOut: replicas,
});
progress(`results: ${written.join(', ')}`);
if (options.readme) {
  const durable = modes.find((m) => m.summary.mode === 'durable');
  if (durable) {
    const readme = join(dirname(benchDir), 'README.md');
    const title = `Latest run: ${startedAt.toISOString().slice(0, 10)}, ${plan.rounds} round(s), medians; full report ${written[0]?.slice(dirname(benchDir).length + 1)}.`;
    const noise = noiseWarning(phases)
      .map((line) => `${line}\n`)
      .join('');
    await updateReadmeTable(readme, `${title}\n\n${noise}${renderPeerMode(durable, { brief: true })}`);
    progress(`README.md: bench table updated`);
  }
}
