import type { Db } from './types.ts';

export async function listFlowEvents(db: Db, runId: string) {
  return db.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } });
}
