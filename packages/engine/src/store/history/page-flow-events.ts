import type { Db } from '../types.ts';
import { oneRun, readsForward, type HistoryWindow } from './history-window.ts';

/**
 * A window of a run's events by id (a bigint, compared as one), through the table's key, (run_id,
 * id) (ADR 0054). The run is named as a range of one value and the order names run_id: an equality
 * would let the planner drop run_id from the order, and while the key was (id) alone it walked that
 * key from the cursor past every other run's events, filtering (198 k rows read for a page of one
 * run's 5,000 in the plan test). Only (run_id, id) gives this order.
 */
export async function pageFlowEvents(db: Db, runId: string, w: HistoryWindow<bigint>) {
  const id = w.after !== undefined ? { gt: w.after } : w.before !== undefined ? { lt: w.before } : undefined;
  return db.flowEvent.findMany({
    where: { run_id: oneRun(runId), ...(id ? { id } : {}) },
    orderBy: readsForward(w) ? [{ run_id: 'asc' }, { id: 'asc' }] : [{ run_id: 'desc' }, { id: 'desc' }],
    take: w.limit,
  });
}
