import type { Db } from '../types.ts';

/** The current rows of the steps a reader holds open, to see them finish without reading the rest. */
export async function findActionRunsBySequence(db: Db, runId: string, sequences: readonly number[]) {
  if (sequences.length === 0) return [];
  return db.actionRun.findMany({
    where: { run_id: runId, sequence: { in: [...sequences] } },
    orderBy: { sequence: 'asc' },
  });
}
