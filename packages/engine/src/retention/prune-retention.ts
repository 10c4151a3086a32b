import { performance } from 'node:perf_hooks';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { countPrunableRows } from '../store/retention/count-prunable-rows.ts';
import { deleteFinishedRuns } from '../store/retention/delete-finished-runs.ts';
import { deleteFinishedTransitions } from '../store/retention/delete-finished-transitions.ts';
import { deleteOldInbox } from '../store/retention/delete-old-inbox.ts';
import { deleteGoneWorkers } from '../store/retention/delete-gone-workers.ts';
import { deletePublishedOutbox } from '../store/retention/delete-published-outbox.ts';
import { noRetentionRows, retentionTables, type RetentionRowCounts } from '../store/retention/retention-tables.ts';
import type { Db } from '../store/types.ts';
import type { KeysetBatch, TimeCursor } from '../store/retention/time-cursor.ts';
import type { ResolvedPruneOptions } from './prune-options.ts';

/** The five walks a prune makes, in order. */
export type PrunePhase = 'runs' | 'transitions' | 'outbox' | 'inbox' | 'workers';

/** Reported after every batch: what is done, what is left of what the prune set out to delete, how fast. */
export interface PruneProgress {
  phase: PrunePhase;
  batches: number;
  /** Rows deleted so far, all tables. */
  done: number;
  /** Rows counted at the start and not deleted yet (never below zero). */
  left: number;
  rowsPerSecond: number;
  elapsedMs: number;
  deleted: RetentionRowCounts;
}

export interface PruneReport {
  /** Rows older than this were pruned (ISO time). */
  cutoff: string;
  /** What the prune counted at its start. */
  planned: RetentionRowCounts;
  deleted: RetentionRowCounts;
  total: number;
  batches: number;
  elapsedMs: number;
  rowsPerSecond: number;
  /** False when `keep` said stop before every walk finished (another replica took the lease). */
  complete: boolean;
}

const sum = (counts: RetentionRowCounts) => retentionTables.reduce((n, t) => n + counts[t], 0);

/**
 * Deletes what retention allows (ADR 0027) in batches of `batchSize`, each its own transaction:
 * runs first (a run and everything it owns in one batch), then finished instances' transitions,
 * published outbox rows, inbox records and the rows of worker pools long gone. Interrupted anywhere, the database is consistent and a
 * rerun carries on. `onProgress` hears of every batch; `keep` is asked before each and stops the
 * prune when false.
 */
export async function pruneRetention(
  deps: RuntimeDeps,
  options: ResolvedPruneOptions,
  hooks: { onProgress?: (progress: PruneProgress) => void; keep?: () => Promise<boolean> } = {},
): Promise<PruneReport> {
  const cutoff = new Date(deps.clock.now().getTime() - options.olderThanSeconds * 1000);
  const limit = options.batchSize;
  const planned = await countPrunableRows(deps.prisma, { cutoff });
  const total = sum(planned);
  const deleted = noRetentionRows();
  const started = performance.now();
  let batches = 0;
  const progress = (phase: PrunePhase): PruneProgress => {
    const elapsedMs = performance.now() - started;
    const done = sum(deleted);
    return {
      phase,
      batches,
      done,
      left: Math.max(0, total - done),
      rowsPerSecond: elapsedMs > 0 ? Math.round((done * 1000) / elapsedMs) : 0,
      elapsedMs: Math.round(elapsedMs),
      deleted: { ...deleted },
    };
  };
  const batchDone = (phase: PrunePhase) => {
    batches += 1;
    const p = progress(phase);
    deps.logger.debug({ retention: p }, 'retention batch pruned');
    hooks.onProgress?.(p);
  };
  const keep = hooks.keep ?? (() => Promise.resolve(true));

  // A walk runs batches until one deletes fewer than `limit` rows: SKIP LOCKED and LIMIT together
  // mean a short batch found nothing more it may take now. `step` deletes a batch and says how many
  // rows it counted against the limit.
  const walk = async (phase: PrunePhase, step: () => Promise<number>) => {
    for (;;) {
      if (!(await keep())) return false;
      const n = await step();
      batchDone(phase);
      if (n < limit) return true;
    }
  };
  const runs = async () => {
    const batch = await deleteFinishedRuns(deps.prisma, {
      cutoff,
      limit,
      timeoutMs: deps.config.retention.transaction_timeout_ms,
    });
    for (const [table, n] of Object.entries(batch)) deleted[table as keyof typeof batch] += n;
    return batch.flow_runs;
  };
  const keyset = (
    table: 'process_transitions' | 'inbox',
    del: (db: Db, args: { cutoff: Date; limit: number; after: TimeCursor | null }) => Promise<KeysetBatch>,
  ) => {
    let after: TimeCursor | null = null;
    return async () => {
      const batch = await del(deps.prisma, { cutoff, limit, after });
      deleted[table] += batch.deleted;
      after = batch.next;
      return batch.deleted;
    };
  };
  const outbox = async () => {
    const n = await deletePublishedOutbox(deps.prisma, { cutoff, limit });
    deleted.outbox += n;
    return n;
  };
  const workers = async () => {
    const n = await deleteGoneWorkers(deps.prisma, { cutoff, limit });
    deleted.workers += n;
    return n;
  };

  const complete =
    (await walk('runs', runs)) &&
    (await walk('transitions', keyset('process_transitions', deleteFinishedTransitions))) &&
    (await walk('outbox', outbox)) &&
    (await walk('inbox', keyset('inbox', deleteOldInbox))) &&
    (await walk('workers', workers));

  const last = progress('workers');
  const report: PruneReport = {
    cutoff: cutoff.toISOString(),
    planned,
    deleted: last.deleted,
    total: last.done,
    batches,
    elapsedMs: last.elapsedMs,
    rowsPerSecond: last.rowsPerSecond,
    complete,
  };
  deps.logger.info(
    { retention: { cutoff: report.cutoff, deleted: report.deleted, total: report.total, batches, complete } },
    'retention pruned',
  );
  return report;
}
