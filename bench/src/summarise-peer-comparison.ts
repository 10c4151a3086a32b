import type { DurabilityMode, PeerPhaseResult } from './run-peer-phase.ts';
import { stepsPerFlow } from './bench-flow.ts';
import { labelPoolCounters } from './pool-counters-per-flow.ts';

/** The median of a set of figures, with its extremes: how far the rounds disagree. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly n: number;
}

/** The middle value (the mean of the two middle ones for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** Median, min and max of `values`; null when there is none (a figure the run could not read). */
export function spread(values: readonly (number | null)[]): Spread | null {
  const known = values.filter((v): v is number => v !== null && Number.isFinite(v));
  if (known.length === 0) return null;
  return { median: median(known), min: Math.min(...known), max: Math.max(...known), n: known.length };
}

/** Each statement label's calls per flow (all the phase's flows), median over phases; a phase without it counts 0. */
function byLabel(phases: readonly PeerPhaseResult[]): [string, number][] {
  const labels = new Set(phases.flatMap((p) => (p.statements ?? []).map((g) => g.label)));
  const rows: [string, number][] = [...labels].map((label) => [
    label,
    median(phases.map((p) => (p.statements?.find((g) => g.label === label)?.calls ?? 0) / (p.warmupFlows + p.flows))),
  ]);
  return rows.sort((a, b) => b[1] - a[1]);
}

/** Each worker pool counter per flow (all the phase's flows), median over phases; empty for a system without a pool. */
function poolPerFlow(phases: readonly PeerPhaseResult[]): [string, number][] {
  const labelled = phases.flatMap((p) =>
    p.poolCounters
      ? [labelPoolCounters(p.poolCounters).map(([l, n]) => [l, n / (p.warmupFlows + p.flows)] as const)]
      : [],
  );
  const first = labelled[0];
  if (!first) return [];
  return first.map(([label], i) => [label, median(labelled.map((rows) => rows[i]?.[1] ?? 0))]);
}

/** One system at one concurrency, over every round. */
export interface SystemSummary {
  readonly system: PeerPhaseResult['system'];
  readonly concurrency: number;
  readonly rounds: number;
  readonly flowsPerSecond: Spread | null;
  readonly latencyP50Ms: Spread | null;
  readonly latencyP99Ms: Spread | null;
  readonly statementsPerFlow: Spread | null;
  readonly commitsPerFlow: Spread | null;
  readonly writeTransactionsPerFlow: Spread | null;
  readonly nodeCpuMsPerFlow: Spread | null;
  readonly postgresCpuMsPerFlow: Spread | null;
  /** WAL flushes per flow and the mean time of one (pg_stat_wal), and the executor's time per flow. */
  readonly walSyncsPerFlow: Spread | null;
  readonly walSyncMs: Spread | null;
  readonly executorMsPerFlow: Spread | null;
  /**
   * Cores the system kept busy over the measured loop, flows/s × (Node + PostgreSQL CPU per flow); null
   * where PostgreSQL's CPU could not be read. Its
   * flows/s is this ÷ its CPU per flow, so a system short of a throughput target is short of one or both.
   */
  readonly coresBusy: Spread | null;
  /** steps/s ÷ pgbench's 4-client tps in the same mode, per round. */
  readonly r: Spread | null;
  /** Statements per flow by label (median over rounds), busiest first; empty without pg_stat_statements. */
  readonly statementsByLabel: ReadonlyArray<readonly [label: string, perFlow: number]>;
  /** Sagaflow's worker pool counters per flow (median over rounds), in {@link labelPoolCounters}' order; empty for DBOS. */
  readonly poolCountersPerFlow: ReadonlyArray<readonly [label: string, perFlow: number]>;
}

/** Sagaflow ÷ DBOS in each round at one concurrency: above 1 means Sagaflow has more of it. */
export interface RatioSummary {
  readonly concurrency: number;
  readonly perRound: ReadonlyArray<{
    readonly round: number;
    readonly flowsPerSecond: number;
    readonly latencyP50: number;
  }>;
  readonly flowsPerSecond: Spread | null;
  readonly latencyP50: Spread | null;
  readonly latencyP99: Spread | null;
}

export interface ModeSummary {
  readonly mode: DurabilityMode;
  readonly concurrencies: readonly number[];
  readonly systems: readonly SystemSummary[];
  readonly ratios: readonly RatioSummary[];
}

/**
 * Summarises one durability mode's phases: per system and concurrency the median and spread over
 * rounds of every figure, and per concurrency the Sagaflow ÷ DBOS ratio of each round that ran
 * both (the ratio is taken within a round, then summarised, so slow drift of the machine between
 * rounds cancels). `ceiling4Tps` is pgbench's 4-client tps in the same mode, for R.
 */
export function summariseMode(
  results: readonly PeerPhaseResult[],
  mode: DurabilityMode,
  ceiling4Tps: number | null,
): ModeSummary {
  const inMode = results.filter((r) => r.mode === mode);
  const concurrencies = [...new Set(inMode.map((r) => r.concurrency))].sort((a, b) => a - b);
  const systems: SystemSummary[] = [];
  for (const system of ['Sagaflow', 'DBOS', 'Floor'] as const) {
    for (const concurrency of concurrencies) {
      const phases = inMode.filter((r) => r.system === system && r.concurrency === concurrency);
      if (phases.length === 0) continue;
      const of = (pick: (r: PeerPhaseResult) => number | null) => spread(phases.map(pick));
      systems.push({
        system,
        concurrency,
        rounds: phases.length,
        flowsPerSecond: of((r) => r.flowsPerSecond),
        latencyP50Ms: of((r) => r.latencyP50Ms),
        latencyP99Ms: of((r) => r.latencyP99Ms),
        statementsPerFlow: of((r) => r.statementsPerFlow),
        commitsPerFlow: of((r) => r.commitsPerFlow),
        writeTransactionsPerFlow: of((r) => r.writeTransactionsPerFlow),
        nodeCpuMsPerFlow: of((r) => r.nodeCpuMsPerFlow),
        postgresCpuMsPerFlow: of((r) => r.postgresCpuMsPerFlow),
        // Results written before these were read have none (undefined): no figure, not zero.
        walSyncsPerFlow: of((r) => r.walSyncsPerFlow ?? null),
        walSyncMs: of((r) => r.walSyncMs ?? null),
        executorMsPerFlow: of((r) => r.executorMsPerFlow ?? null),
        coresBusy: of((r) =>
          r.postgresCpuMsPerFlow === null
            ? null
            : (r.flowsPerSecond * (r.nodeCpuMsPerFlow + r.postgresCpuMsPerFlow)) / 1000,
        ),
        r: ceiling4Tps === null ? null : of((r) => (r.flowsPerSecond * stepsPerFlow) / ceiling4Tps),
        statementsByLabel: byLabel(phases),
        poolCountersPerFlow: poolPerFlow(phases),
      });
    }
  }
  const ratios = concurrencies.map((concurrency): RatioSummary => {
    const perRound = [];
    const p99: number[] = [];
    const rounds = [...new Set(inMode.map((r) => r.round))].sort((a, b) => a - b);
    for (const round of rounds) {
      const find = (system: PeerPhaseResult['system']) =>
        inMode.find((r) => r.system === system && r.round === round && r.concurrency === concurrency);
      const ours = find('Sagaflow');
      const theirs = find('DBOS');
      if (!ours || !theirs) continue;
      perRound.push({
        round,
        flowsPerSecond: ours.flowsPerSecond / theirs.flowsPerSecond,
        latencyP50: ours.latencyP50Ms / theirs.latencyP50Ms,
      });
      p99.push(ours.latencyP99Ms / theirs.latencyP99Ms);
    }
    return {
      concurrency,
      perRound,
      flowsPerSecond: spread(perRound.map((r) => r.flowsPerSecond)),
      latencyP50: spread(perRound.map((r) => r.latencyP50)),
      latencyP99: spread(p99),
    };
  });
  return { mode, concurrencies, systems, ratios };
}
