import type { Db } from '../types.ts';

/**
 * A run's anomalies, oldest first, at most `limit`, or those after the id `after`: a journal of
 * faults, short unless the run is sick, read through its run_id index.
 */
export async function listRunAnomalies(db: Db, runId: string, limit: number, after?: bigint) {
  return db.anomalyLog.findMany({
    where: { run_id: runId, ...(after === undefined ? {} : { id: { gt: after } }) },
    orderBy: { id: 'asc' },
    take: limit,
  });
}
export type DbRunAnomaly = Awaited<ReturnType<typeof listRunAnomalies>>[number];
