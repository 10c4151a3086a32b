import type { PeerPhaseResult } from './run-peer-phase.ts';

/** A phase result for the summary's and the targets' tests: plausible figures, `overrides` on top. */
export function peerPhase(
  overrides: Partial<PeerPhaseResult> & Pick<PeerPhaseResult, 'system' | 'round' | 'concurrency'>,
): PeerPhaseResult {
  return {
    mode: 'durable',
    database: 'x',
    warmupFlows: 10,
    flows: 100,
    windowMs: 1000,
    flowsPerSecond: 100,
    latencyP50Ms: 10,
    latencyP99Ms: 20,
    statementsPerFlow: 30,
    commitsPerFlow: 10,
    walSyncsPerFlow: 5,
    walSyncMs: 0.3,
    executorMsPerFlow: 1,
    writeTransactionsPerFlow: 5,
    clusterWriteTransactionsPerFlow: 5,
    attributedTransactions: { analyzes: 0 },
    nodeCpuMsPerFlow: 1,
    postgresCpuMsPerFlow: 2,
    otherCores: 0,
    statements: null,
    poolCounters: null,
    ...overrides,
  };
}
