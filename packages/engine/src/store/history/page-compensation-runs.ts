import type { Db } from '../types.ts';
import { readsForward, type HistoryWindow } from './history-window.ts';

/** A compensation's place in the run's rollback: its level, then its position in that level. */
export interface CompensationKey {
  level: number;
  ordinal: number;
}

/**
 * A window of a run's compensations by (rollback_level, ordinal), through the unique
 * (run_id, rollback_level, ordinal) index. The plain bound on the level is implied by the OR; it is
 * what lets the planner start the index scan at the cursor instead of the run's first row.
 */
export async function pageCompensationRuns(db: Db, runId: string, w: HistoryWindow<CompensationKey>) {
  const key = w.after ?? w.before;
  const forward = readsForward(w);
  const past = forward ? ('gt' as const) : ('lt' as const);
  const bound = forward ? ('gte' as const) : ('lte' as const);
  const where = key
    ? {
        rollback_level: { [bound]: key.level },
        OR: [
          { rollback_level: { [past]: key.level } },
          { rollback_level: key.level, ordinal: { [past]: key.ordinal } },
        ],
      }
    : {};
  const direction = forward ? ('asc' as const) : ('desc' as const);
  return db.compensationRun.findMany({
    where: { run_id: runId, ...where },
    orderBy: [{ rollback_level: direction }, { ordinal: direction }],
    take: w.limit,
  });
}
