import type { RawDb } from '../db/raw-db.ts';
import type { ActionRun } from '../generated/prisma/client.ts';

/** A run's step rows, in sequence order: what a replay works from. */
export async function listActionRuns(db: RawDb, runId: string): Promise<DbActionRun[]> {
  return db.$queryRaw<DbActionRun[]>`
    select * from "sagaflow"."action_runs" where run_id = ${runId}::uuid order by sequence`;
}
export type DbActionRun = ActionRun;
