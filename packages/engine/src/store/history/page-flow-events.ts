import type { Db } from '../types.ts';
import { readsForward, type HistoryWindow } from './history-window.ts';

/** A window of a run's events by id (a bigint, compared as one), through the (run_id, id) index. */
export async function pageFlowEvents(db: Db, runId: string, w: HistoryWindow<bigint>) {
  const id = w.after !== undefined ? { gt: w.after } : w.before !== undefined ? { lt: w.before } : undefined;
  return db.flowEvent.findMany({
    where: { run_id: runId, ...(id ? { id } : {}) },
    orderBy: { id: readsForward(w) ? 'asc' : 'desc' },
    take: w.limit,
  });
}
