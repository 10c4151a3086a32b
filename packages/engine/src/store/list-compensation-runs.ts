import type { Db } from './types.ts';

export async function listCompensationRuns(db: Db, runId: string) {
  return db.compensationRun.findMany({
    where: { run_id: runId },
    orderBy: [{ rollback_level: 'asc' }, { ordinal: 'asc' }],
  });
}
export type DbCompensationRun = Awaited<ReturnType<typeof listCompensationRuns>>[number];
