import type { WorkerPoolCounters } from '@sagaflow/engine';
import { createDatabase, dropDatabase } from '@sagaflow/test-postgres';
import { observerRole } from './observer-role.ts';
import type { PeerSystem } from './peer-system.ts';
import { progress } from './progress.ts';
import { readCpuTimes, type CpuTimes } from './read-cpu-times.ts';
import { readDatabaseCounters, waitForNoSessions } from './read-database-counters.ts';
import { readStatisticsWriters } from './read-statistics-writers.ts';
import { readStatementStats, type StatementGroup } from './read-statement-stats.ts';
import { closedLoopFigures, type ClosedLoopFigures } from './run-closed-loop.ts';
import { runPeerLoops } from './run-peer-loops.ts';
import { withPgClient } from './with-pg-client.ts';

/** Durable commits (the headline) or the test cluster's fsync-off settings (secondary). */
export type DurabilityMode = 'durable' | 'fsync-off';

export interface PeerPhasePlan {
  readonly adminUrl: string;
  readonly dataDir: string;
  readonly statementsEnabled: boolean;
  readonly mode: DurabilityMode;
  readonly round: number;
  readonly concurrency: number;
  readonly warmupMs: number;
  /** Flows the first warm-up runs at least, before the ANALYZE (ADR 0086). */
  readonly warmupFlows: number;
  readonly measureMs: number;
  /** The database holding the system's schema, cloned for this phase. */
  readonly template: string;
  /** Sagaflow's `worker.notify` (`--no-notify` makes it false). */
  readonly notify: boolean;
}

/** One system at one concurrency in one round: what the report compares. */
export interface PeerPhaseResult extends ClosedLoopFigures {
  readonly system: PeerSystem['name'];
  readonly mode: DurabilityMode;
  readonly round: number;
  readonly concurrency: number;
  readonly database: string;
  /** pg_stat_statements calls in the phase's database (BEGIN/COMMIT included) ÷ every flow run in it. */
  readonly statementsPerFlow: number | null;
  /** pg_stat_database.xact_commit of the phase's database ÷ every flow run in it. */
  readonly commitsPerFlow: number;
  /**
   * The system's writing transactions ÷ every flow run: transaction ids assigned cluster-wide over the
   * phase, less those the bench can attribute to others ({@link PeerPhaseResult.attributedTransactions}).
   */
  readonly writeTransactionsPerFlow: number;
  /** Transaction ids assigned cluster-wide over the phase ÷ every flow run, nothing left out. */
  readonly clusterWriteTransactionsPerFlow: number;
  /**
   * Transaction ids of the phase that are not the system's: the ANALYZEs that wrote planner
   * statistics in any database, the bench's own after the warm-up (ADR 0051) and autovacuum's.
   */
  readonly attributedTransactions: { readonly analyzes: number };
  /**
   * The cluster's WAL flushes (pg_stat_wal.wal_sync Δ, read like the commits) ÷ every flow run: the disk
   * waits a flow's commits made. 0 while fsync is off.
   */
  readonly walSyncsPerFlow: number;
  /** The mean time of one of those flushes (wal_sync_time ÷ wal_sync), null when there was none. */
  readonly walSyncMs: number | null;
  /** pg_stat_statements' execution time in the phase's database ÷ every flow run; null without statements. */
  readonly executorMsPerFlow: number | null;
  /** process.cpuUsage() over the measured window ÷ its flows. */
  readonly nodeCpuMsPerFlow: number;
  /** The postmaster's and its children's CPU (/proc) over the measured window ÷ its flows. */
  readonly postgresCpuMsPerFlow: number | null;
  /** The rest of the machine (other processes), in cores, over the measured window: noise when high. */
  readonly otherCores: number | null;
  /** The phase's statements by label, busiest first. */
  readonly statements: StatementGroup[] | null;
  /** Sagaflow's worker pool counters over warm-up and measured flows, read before it closed; null for DBOS. */
  readonly poolCounters: WorkerPoolCounters | null;
}

/**
 * Runs `system` on a fresh clone of its template, in a process of its own ({@link runPeerLoops}),
 * right after a checkpoint, and drops the clone once it is read (ADR 0075):
 * connect, a closed-loop warm-up (JIT, pools, caches), then the measured closed loop, then close. Counts per flow come from the database's
 * counters read with nobody connected before and after (PostgreSQL 15 flushes a backend's counters
 * lazily, always on exit), so they cover warm-up and measured flows and the connect and close; rates,
 * latencies and CPU cover the measured window only.
 */
export async function runPeerPhase(system: PeerSystem, plan: PeerPhasePlan): Promise<PeerPhaseResult> {
  const { adminUrl, mode, round, concurrency } = plan;
  const database = `${system.name}_${mode}_r${round}_c${concurrency}`.toLowerCase().replaceAll('-', '_');
  const url = await createDatabase(adminUrl, database, { template: plan.template });
  // The clone's pages and whatever the phase before left dirty are written now, and the checkpointer's
  // clock starts again: no checkpoint falls inside this phase's window (ADR 0075).
  await withPgClient(adminUrl, (c) => c.query('checkpoint'));
  const before = await readDatabaseCounters(adminUrl, database);
  // Scanning /proc takes a while on a busy machine: the child reads its own time right at the loop's
  // edges so the scans are not charged to the flows, and the machine's share is divided by the
  // whole span the two scans enclose.
  const reads: { at: number; times: CpuTimes; end: number }[] = [];
  const { warmup, loop, nodeMs, poolCounters } = await runPeerLoops(
    {
      system: system.name,
      notify: plan.notify,
      url,
      concurrency,
      warmupMs: plan.warmupMs,
      warmupFlows: plan.warmupFlows,
      measureMs: plan.measureMs,
    },
    async () => {
      const at = performance.now();
      const times = await readCpuTimes(plan.dataDir);
      reads.push({ at, times, end: performance.now() });
    },
  );
  const [first, last] = [reads[0]!, reads[1]!];
  const cpu = { serverBefore: first.times, serverAfter: last.times, nodeMs, spanMs: last.end - first.at };
  await waitForNoSessions(adminUrl, database);
  const after = await readDatabaseCounters(adminUrl, database);
  // What wrote planner statistics meanwhile was an ANALYZE, the bench's or autovacuum's: not the system's.
  const attributedTransactions = { analyzes: await readStatisticsWriters(adminUrl, before.nextXid, after.nextXid) };
  const statements = plan.statementsEnabled ? await readStatementStats(adminUrl, database, observerRole) : null;
  // Read: gone, so autovacuum never cleans up after this phase inside a later phase's window (ADR 0075).
  await dropDatabase(adminUrl, database);

  const allFlows = warmup.flows + loop.flows;
  const delta = (pick: (t: CpuTimes) => number | null) => {
    const [from, to] = [pick(cpu.serverBefore), pick(cpu.serverAfter)];
    return from === null || to === null ? null : to - from;
  };
  const postgresMs = delta((t) => t.postgresMs);
  const machineMs = delta((t) => t.machineMs);
  // The rest of the machine over the span: neither the flows' Node time nor PostgreSQL (the scans count here).
  const otherCores =
    machineMs === null || postgresMs === null ? null : Math.max(0, machineMs - postgresMs - cpu.nodeMs) / cpu.spanMs;
  const result: PeerPhaseResult = {
    system: system.name,
    mode,
    round,
    concurrency,
    database,
    ...closedLoopFigures(warmup, loop),
    statementsPerFlow: statements === null ? null : statements.reduce((sum, g) => sum + g.calls, 0) / allFlows,
    commitsPerFlow: (after.xactCommit - before.xactCommit) / allFlows,
    walSyncsPerFlow: (after.walSyncs - before.walSyncs) / allFlows,
    walSyncMs:
      after.walSyncs > before.walSyncs
        ? (after.walSyncMs - before.walSyncMs) / (after.walSyncs - before.walSyncs)
        : null,
    executorMsPerFlow: statements === null ? null : statements.reduce((sum, g) => sum + g.execMs, 0) / allFlows,
    writeTransactionsPerFlow: (after.nextXid - before.nextXid - attributedTransactions.analyzes) / allFlows,
    clusterWriteTransactionsPerFlow: (after.nextXid - before.nextXid) / allFlows,
    attributedTransactions,
    nodeCpuMsPerFlow: cpu.nodeMs / loop.flows,
    postgresCpuMsPerFlow: postgresMs === null ? null : postgresMs / loop.flows,
    otherCores,
    statements,
    poolCounters,
  };
  progress(
    `${mode} round ${round} c=${concurrency} ${system.name}: ${result.flowsPerSecond.toFixed(0)} flows/s, ` +
      `p50 ${result.latencyP50Ms.toFixed(1)} ms (${loop.flows} flows in ${(loop.windowMs / 1000).toFixed(1)} s)`,
  );
  return result;
}
