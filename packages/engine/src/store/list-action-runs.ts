import type { Db } from './types.ts';

export async function listActionRuns(db: Db, runId: string) {
  return db.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
}
export type DbActionRun = Awaited<ReturnType<typeof listActionRuns>>[number];
