import type { Db } from './types.ts';

/** Acknowledges a job; only the worker that holds its lease may. */
export async function deleteJob(db: Db, args: { id: bigint; workerId: string }): Promise<void> {
  await db.job.deleteMany({ where: { id: args.id, locked_by: args.workerId } });
}
