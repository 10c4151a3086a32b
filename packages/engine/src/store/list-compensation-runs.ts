import type { RawDb } from '../db/raw-db.ts';
import type { CompensationRun } from '../generated/prisma/client.ts';

/** A run's compensation rows, by rollback level and position in it. */
export async function listCompensationRuns(db: RawDb, runId: string): Promise<DbCompensationRun[]> {
  return db.$queryRaw<DbCompensationRun[]>`
    select * from "sagaflow"."compensation_runs" where run_id = ${runId}::uuid order by rollback_level, ordinal`;
}
export type DbCompensationRun = CompensationRun;
