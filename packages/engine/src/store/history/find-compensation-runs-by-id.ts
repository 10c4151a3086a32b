import type { Db } from '../types.ts';

/** The current rows of the compensations a reader holds open (by primary key, within the run). */
export async function findCompensationRunsById(db: Db, runId: string, ids: readonly string[]) {
  if (ids.length === 0) return [];
  return db.compensationRun.findMany({
    where: { run_id: runId, id: { in: [...ids] } },
    orderBy: [{ rollback_level: 'asc' }, { ordinal: 'asc' }],
  });
}
