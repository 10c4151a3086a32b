import type { Db } from './types.ts';

export async function listCompensationRuns(db: Db, runId: string) {
  return db.compensationRun.findMany({
    where: { run_id: runId },
    orderBy: [{ rollback_level: 'asc' }, { action_sequence: 'desc' }],
  });
}
export type DbCompensationRun = Awaited<ReturnType<typeof listCompensationRuns>>[number];
