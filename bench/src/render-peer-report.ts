import { availableParallelism } from 'node:os';
import { fixed } from './markdown-table.ts';
import { renderPeerMode, type PeerModeReport } from './render-peer-comparison.ts';
import type { PeerPhaseResult } from './run-peer-phase.ts';

export interface PeerReport {
  readonly environment: string;
  readonly plan: string;
  readonly modes: readonly PeerModeReport[];
  readonly phases: readonly PeerPhaseResult[];
}

/** How every figure is obtained, printed under the tables so a reader can judge them. */
const method = [
  "Each phase runs one system at one concurrency on a fresh clone of that system's template database (its schema, " +
    'nothing else) on the same PostgreSQL server, started right after a CHECKPOINT and dropped once read, so no ' +
    "checkpoint and no autovacuum of an earlier phase's tables fall in a window (ADR 0075): connect, a closed-loop warm-up, the measured closed loop, close. " +
    '`c` clients each run one flow at a time: Sagaflow `startFlow()` then its `run.finished` event (a worker pool of ' +
    '`c`); DBOS a call of the registered workflow, which returns once the result is checkpointed. Both pools hold ' +
    '`c + 4` connections. Systems alternate within each round (Sagaflow, DBOS at c=1, then c=8, then c=32); the ' +
    'ratio is taken within a round, then its median and min–max over rounds. Both systems run as a host runs them: ' +
    "Sagaflow from its build (`packages/engine/dist`, tsc's JavaScript), DBOS from its published JavaScript.",
  'flows/s: measured flows ÷ the window from the first start to the last finish. p50/p99: per flow, start call → ' +
    "completion known to the client. Statements: pg_stat_statements calls in the phase's database (BEGIN, COMMIT " +
    'and other utility statements included). Commits: pg_stat_database.xact_commit Δ, read with nobody connected ' +
    '(backends flush these counters on exit); read-only transactions count. Writing transactions: transaction ids ' +
    "assigned cluster-wide over the phase, less the ANALYZEs of the phase (the bench's own after the warm-up " +
    "and autovacuum's in any database of the cluster: the transactions whose id is the xmin of a pg_statistic " +
    'row written meanwhile, which no system writes); the raw cluster-wide figure and what was left out are in the ' +
    'JSON (ADR 0060). These three cover warm-up and measured flows and divide by both. Node CPU: ' +
    'process.cpuUsage() over the measured window (the harness included); PostgreSQL CPU: utime+stime of the ' +
    'postmaster and its children from /proc over the same window; both ÷ measured flows.',
  "WAL flushes: pg_stat_wal's wal_sync Δ over the phase (cluster-wide, read like the commits) ÷ every flow, and " +
    'their mean time (wal_sync_time ÷ wal_sync; the bench cluster runs with track_wal_io_timing on). Executor time: ' +
    "pg_stat_statements' total_exec_time in the phase's database ÷ every flow. With fsync off no commit flushes.",
];

/**
 * A loud line when other processes were busy during the measured windows (more than 0.2 of a core
 * on average in some phase): then rates and CPU are pessimistic. Empty on a quiet machine.
 */
export function noiseWarning(phases: readonly PeerPhaseResult[]): string[] {
  const others = phases.map((p) => p.otherCores).filter((n): n is number => n !== null);
  const worst = Math.max(0, ...others);
  if (worst < 0.2) return [];
  return [
    `**Warning: other processes kept up to ${fixed(worst, 2)} of the machine's ${availableParallelism()} cores busy ` +
      'during measured windows: rates and CPU shares here are noisy (lower than on a quiet machine); counts per ' +
      'flow are not affected.**',
    '',
  ];
}

export function renderPeerReport(report: PeerReport): string {
  const noise = noiseWarning(report.phases);
  return [
    '# Sagaflow bench: Sagaflow vs DBOS Transact, side by side',
    '',
    report.environment,
    '',
    report.plan,
    '',
    ...noise,
    ...report.modes.flatMap((m) => [renderPeerMode(m), '']),
    '### How each figure is obtained',
    '',
    ...method.flatMap((p) => [p, '']),
  ].join('\n');
}
