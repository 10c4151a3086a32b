import { parseArgs } from 'node:util';
import { warmupFlowsBeforeAnalyze } from './analyze-like-autovacuum.ts';
import { fixed, markdownTable } from './markdown-table.ts';
import { createObserverRole } from './observer-role.ts';
import { progress } from './progress.ts';
import { runPeerPhase, type PeerPhaseResult } from './run-peer-phase.ts';
import { sagaflowPeer } from './sagaflow-peer.ts';
import { startBenchCluster } from './start-bench-cluster.ts';
import { spread, type Spread } from './summarise-peer-comparison.ts';

/**
 * `pnpm --filter @sagaflow/bench run bench:xacts [rounds] [concurrency] [--measure-ms N]`: where a
 * Sagaflow phase's writing transactions go, counted exactly as `npm run bench` counts them
 * ({@link runPeerPhase}: the cluster's transaction-id delta over warm-up and measured flows, ÷ flows)
 * and taken apart: the ANALYZEs (the bench's own and autovacuum's, as the transactions that wrote
 * `pg_statistic` in any database) and the system's figure that is left; beside them the worker pool's counters that say which starts went through the job table
 * (each costs three writing transactions more than one handed to the pool, ADR 0060). On a
 * throwaway cluster with test-postgres's settings (fsync off: a count does not depend on it), the
 * full bench's windows (1 s warm-up, ANALYZE, 1 s, then the measured loop).
 */
async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    args: process.argv.slice(2).filter((a) => a !== '--'),
    options: { 'measure-ms': { type: 'string', default: '5000' } },
  });
  const rounds = Number(positionals[0] ?? 3);
  const concurrency = Number(positionals[1] ?? 1);
  const measureMs = Number(values['measure-ms']);
  const { cluster, statements } = await startBenchCluster();
  const phases: PeerPhaseResult[] = [];
  try {
    await createObserverRole(cluster.adminUrl);
    const system = sagaflowPeer();
    await system.prepareTemplate(cluster.adminUrl, 'sagaflow_template');
    for (let round = 1; round <= rounds; round++) {
      const phase = await runPeerPhase(system, {
        adminUrl: cluster.adminUrl,
        dataDir: cluster.dataDir,
        statementsEnabled: statements.enabled,
        mode: 'fsync-off',
        round,
        concurrency,
        warmupMs: 1_000,
        warmupFlows: warmupFlowsBeforeAnalyze,
        measureMs,
        template: 'sagaflow_template',
        notify: true,
      });
      phases.push(phase);
    }
  } finally {
    await cluster.stop();
  }
  const flowsOf = (p: PeerPhaseResult) => p.warmupFlows + p.flows;
  const rows = phases.map((p) => {
    const c = p.poolCounters;
    return [
      String(p.round),
      String(flowsOf(p)),
      String(Math.round(p.clusterWriteTransactionsPerFlow * flowsOf(p))),
      fixed(p.clusterWriteTransactionsPerFlow, 3),
      String(p.attributedTransactions.analyzes),
      fixed(p.writeTransactionsPerFlow, 3),
      // A flow handed to its own pool alone (c = 1) writes 4; batches share theirs (ADR 0045).
      concurrency === 1 ? String(Math.round((p.writeTransactionsPerFlow - 4) * flowsOf(p))) : '–',
      String(c?.handOffsRefused.stale ?? '–'),
      String(c?.handOffsRefused.queued ?? '–'),
      String(c?.jobsClaimed ?? '–'),
      String(c?.looks ?? '–'),
    ];
  });
  const range = (s: Spread | null) => (s ? `${fixed(s.median, 3)} (${fixed(s.min, 3)}–${fixed(s.max, 3)})` : '–');
  console.log(
    `Sagaflow, c = ${concurrency}, ${rounds} phase(s) of 1 s + ANALYZE + 1 s warm-up and ${measureMs / 1000} s measured\n`,
  );
  console.log(
    markdownTable(
      [
        'phase',
        'flows',
        'xids (cluster)',
        'per flow (cluster)',
        "ANALYZEs (bench's + autovacuum's)",
        'Sagaflow writing tx / flow',
        'Sagaflow xids beyond 4 a flow (c = 1)',
        'refused: no claim for 2 polls',
        'refused: a wake was queued',
        'jobs claimed',
        'looks at the queue',
      ],
      rows,
    ),
  );
  console.log(
    `\nmedian (min–max): cluster ${range(spread(phases.map((p) => p.clusterWriteTransactionsPerFlow)))}, ` +
      `Sagaflow ${range(spread(phases.map((p) => p.writeTransactionsPerFlow)))} writing transactions per flow`,
  );
  progress('done');
}

await main();
