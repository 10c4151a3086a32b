import type { Db } from '../types.ts';
import { readsForward, type HistoryWindow } from './history-window.ts';

/**
 * A window of a run's steps by sequence, through the unique (run_id, sequence) index: a range
 * read from the cursor, never a scan of the run's other steps (ADR 0035).
 */
export async function pageActionRuns(db: Db, runId: string, w: HistoryWindow<number>) {
  const sequence = w.after !== undefined ? { gt: w.after } : w.before !== undefined ? { lt: w.before } : undefined;
  return db.actionRun.findMany({
    where: { run_id: runId, ...(sequence ? { sequence } : {}) },
    orderBy: { sequence: readsForward(w) ? 'asc' : 'desc' },
    take: w.limit,
  });
}
