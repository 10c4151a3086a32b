import type { Database, OutboxLag } from '@sagaflow/engine';
import { readAnomalyCounts, type AnomalyCount } from './reads/read-anomaly-counts.ts';
import { readFailingCounts, type FailingCount } from './reads/read-failing-counts.ts';
import { readInstanceCounts, type InstanceCount } from './reads/read-instance-counts.ts';
import { readRepairCounts, type RepairCount } from './reads/read-repair-counts.ts';
import { readRunCounts, type RunCount } from './reads/read-run-counts.ts';
import { readStepDurations, type StepDurations } from './reads/read-step-durations.ts';
import { readStuckCounts, type StuckCount } from './reads/read-stuck-counts.ts';
import { readTransitionCounts, type TransitionCount } from './reads/read-transition-counts.ts';
import { readOutboxFigures } from './reads/read-outbox-figures.ts';
import { readPendingApprovals } from './reads/read-pending-approvals.ts';
import { readRetentionAges, type RetentionAge } from './reads/read-retention-ages.ts';
import { withReadSnapshot } from './reads/with-read-snapshot.ts';

/** Runs by flow and status, and the moment they were counted. */
export interface CountedRuns {
  at: Date;
  counts: RunCount[];
}

/**
 * Everything one scrape reports, read from one snapshot of the database; the run counts may be an
 * earlier snapshot's (`runs.at`).
 */
export interface MetricsSnapshot {
  /** The moment ages are measured from. */
  at: Date;
  runs: CountedRuns;
  stuck: StuckCount[];
  /** Actions that finished in (options.steps.after, stepsUntil]: a window to add to the histogram. */
  steps: StepDurations[];
  stepsUntil: Date;
  anomalies: AnomalyCount[];
  instances: InstanceCount[];
  /** Failing ACTIVE instances and their failing timeouts, by process and state (ADR 0127). */
  failing: FailingCount[];
  transitions: TransitionCount[];
  repairs: RepairCount[];
  /** Repair commands waiting for a second operator's approval. */
  approvalsPending: number;
  outbox: OutboxLag;
  /** The age of the oldest history retention could remove (ADR 0027). */
  retention: RetentionAge[];
}

export interface SnapshotOptions {
  /** The longest the reads may take together; PostgreSQL cancels a statement past it. */
  timeoutMs: number;
  /**
   * Which finished steps to read: those after `after` and at least `settleMs` old, so that an outcome
   * whose transaction is still committing (its finished_at is already set) lands in a later window.
   */
  steps: { after: Date; settleMs: number };
  /**
   * The previous scrape's run counts, reused while younger than `maxAgeMs`: they count every run
   * ever kept, a read of the whole table (ADR 0036), where the other figures read open rows or windows.
   */
  runs?: { last: CountedRuns | undefined; maxAgeMs: number };
  now?: () => Date;
}

/** Every figure of one scrape, from one bounded read-only snapshot (withReadSnapshot). */
export async function readMetricsSnapshot(
  db: Pick<Database, 'prisma'>,
  options: SnapshotOptions,
): Promise<MetricsSnapshot> {
  return withReadSnapshot(db, options.timeoutMs, async (tx) => {
    const at = (options.now ?? (() => new Date()))();
    const last = options.runs?.last;
    const fresh = last !== undefined && at.getTime() - last.at.getTime() < (options.runs?.maxAgeMs ?? 0);
    const runs = fresh ? last : { at, counts: await readRunCounts(tx) };
    const stuck = await readStuckCounts(tx);
    const settled = new Date(at.getTime() - options.steps.settleMs);
    const stepsUntil = settled > options.steps.after ? settled : options.steps.after;
    const steps =
      stepsUntil > options.steps.after
        ? await readStepDurations(tx, { after: options.steps.after, until: stepsUntil })
        : [];
    const anomalies = await readAnomalyCounts(tx);
    const instances = await readInstanceCounts(tx);
    const failing = await readFailingCounts(tx);
    const transitions = await readTransitionCounts(tx);
    const repairs = await readRepairCounts(tx);
    const approvalsPending = await readPendingApprovals(tx, at);
    const outbox = await readOutboxFigures(tx, at);
    const retention = await readRetentionAges(tx, at);
    return {
      at,
      runs,
      stuck,
      steps,
      stepsUntil,
      anomalies,
      instances,
      failing,
      transitions,
      repairs,
      approvalsPending,
      outbox,
      retention,
    };
  });
}
