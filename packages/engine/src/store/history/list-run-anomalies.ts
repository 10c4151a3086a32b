import type { Db } from '../types.ts';

/** A run's anomalies, oldest first, at most `limit`: a journal of faults, short unless the run is sick. */
export async function listRunAnomalies(db: Db, runId: string, limit: number) {
  return db.anomalyLog.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' }, take: limit });
}
export type DbRunAnomaly = Awaited<ReturnType<typeof listRunAnomalies>>[number];
