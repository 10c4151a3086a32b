import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { countPrunableRows } from '../store/retention/count-prunable-rows.ts';
import type { RetentionRowCounts } from '../store/retention/retention-tables.ts';
import { resolvePruneOptions, type PruneOptions } from './prune-options.ts';
import type { Loop } from '../worker/start-loop.ts';
import { startRetention } from './start-retention.ts';
import { pruneRetention, type PruneProgress, type PruneReport } from './prune-retention.ts';

/** What a dry run answers: the cutoff, and how many rows of each table a prune would delete now. */
export interface PrunePreview {
  cutoff: string;
  rows: RetentionRowCounts;
  total: number;
}

/** `engine.retention` (ADR 0027). */
export interface Retention {
  /**
   * Deletes, in batches, the finished runs (with their steps, events, signals, timers and jobs), the
   * transitions of finished instances, the published outbox rows, the inbox records and the rows of
   * worker pools gone (stopped or silent) longer than `olderThanSeconds`, and reports every batch to `onProgress`. Never an open run, a run an open run
   * needs or an open approval names, a quarantined or unfinished instance's history, an unpublished
   * outbox row, a worker a Running step names, or the audit trail. Safe to interrupt and to run beside another prune.
   *
   * @example
   * const report = await engine.retention.prune({ olderThanSeconds: 30 * 86_400 }, (p) =>
   *   console.log(`${p.done} rows done, ${p.left} left, ${p.rowsPerSecond} rows/s`));
   */
  prune(options?: PruneOptions, onProgress?: (progress: PruneProgress) => void): Promise<PruneReport>;
  /** The dry run: what `prune` with these options would delete now, counted, nothing deleted. */
  preview(options?: PruneOptions): Promise<PrunePreview>;
  /**
   * Prunes every `retention.interval_seconds` in this process with the configured age and batch
   * size; among replicas, the holder of the `retention` lease does. Idempotent. The control plane
   * calls it when `retention.enabled`.
   */
  start(): void;
  /** Stops the schedule, letting the batch in flight finish. */
  stop(): Promise<void>;
}

export function createRetention(deps: RuntimeDeps): Retention {
  let schedule: Loop | null = null;
  return {
    async prune(options, onProgress) {
      const resolved = resolvePruneOptions(options, deps.config.retention);
      return pruneRetention(deps, resolved, onProgress ? { onProgress } : {});
    },
    async preview(options) {
      const { olderThanSeconds } = resolvePruneOptions(options, deps.config.retention);
      const cutoff = new Date(deps.clock.now().getTime() - olderThanSeconds * 1000);
      const rows = await countPrunableRows(deps.prisma, { cutoff });
      return { cutoff: cutoff.toISOString(), rows, total: Object.values(rows).reduce((a, b) => a + b, 0) };
    },
    start() {
      schedule ??= startRetention(deps);
    },
    async stop() {
      const s = schedule;
      schedule = null;
      await s?.stop();
    },
  };
}
