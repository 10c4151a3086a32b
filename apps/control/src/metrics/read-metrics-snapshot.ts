import { outboxLag, type Database, type OutboxLag } from '@sagaflow/engine';
import { readAnomalyCounts, type AnomalyCount } from './reads/read-anomaly-counts.ts';
import { readInstanceCounts, type InstanceCount } from './reads/read-instance-counts.ts';
import { readRepairCounts, type RepairCount } from './reads/read-repair-counts.ts';
import { readRunCounts, type RunCount } from './reads/read-run-counts.ts';
import { readStepDurations, type StepDurations } from './reads/read-step-durations.ts';
import { readStuckCounts, type StuckCount } from './reads/read-stuck-counts.ts';
import { readTransitionCounts, type TransitionCount } from './reads/read-transition-counts.ts';

/** Everything one scrape reports, read from one snapshot of the database. */
export interface MetricsSnapshot {
  /** The moment ages are measured from. */
  at: Date;
  runs: RunCount[];
  stuck: StuckCount[];
  /** Actions that finished in (options.steps.after, stepsUntil]: a window to add to the histogram. */
  steps: StepDurations[];
  stepsUntil: Date;
  anomalies: AnomalyCount[];
  instances: InstanceCount[];
  transitions: TransitionCount[];
  repairs: RepairCount[];
  outbox: OutboxLag;
}

export interface SnapshotOptions {
  /** The longest the reads may take together; PostgreSQL cancels a statement past it. */
  timeoutMs: number;
  /**
   * Which finished steps to read: those after `after` and at least `settleMs` old, so that an outcome
   * whose transaction is still committing (its finished_at is already set) lands in a later window.
   */
  steps: { after: Date; settleMs: number };
  now?: () => Date;
}

/**
 * Reads every figure in ONE read-only REPEATABLE READ transaction, so the figures of one scrape agree
 * with each other (a run counted Completed is not also counted stuck), under a statement_timeout so a
 * slow database makes the scrape fail fast instead of piling up connections.
 */
export async function readMetricsSnapshot(
  db: Pick<Database, 'prisma'>,
  options: SnapshotOptions,
): Promise<MetricsSnapshot> {
  const timeoutMs = Math.max(1, Math.floor(options.timeoutMs));
  return db.prisma.$transaction(
    async (tx) => {
      await tx.$executeRawUnsafe('set transaction read only');
      // An integer we computed, never input: SET takes no bind parameters.
      await tx.$executeRawUnsafe(`set local statement_timeout = ${timeoutMs}`);
      const at = (options.now ?? (() => new Date()))();
      const runs = await readRunCounts(tx);
      const stuck = await readStuckCounts(tx);
      const settled = new Date(at.getTime() - options.steps.settleMs);
      const stepsUntil = settled > options.steps.after ? settled : options.steps.after;
      const steps =
        stepsUntil > options.steps.after
          ? await readStepDurations(tx, { after: options.steps.after, until: stepsUntil })
          : [];
      const anomalies = await readAnomalyCounts(tx);
      const instances = await readInstanceCounts(tx);
      const transitions = await readTransitionCounts(tx);
      const repairs = await readRepairCounts(tx);
      // The engine's own outbox figures, read inside this transaction (its statement is a $queryRaw).
      const outbox = await outboxLag({ prisma: tx as Database['prisma'] }, { clock: { now: () => at } });
      return { at, runs, stuck, steps, stepsUntil, anomalies, instances, transitions, repairs, outbox };
    },
    { isolationLevel: 'RepeatableRead', maxWait: timeoutMs, timeout: timeoutMs + 1000 },
  );
}
