import type { Db } from './types.ts';

/** Gives a job this worker leased back to the queue, due now; only the worker that holds its lease may. */
export async function releaseJob(db: Db, args: { id: bigint; workerId: string }): Promise<void> {
  await db.job.updateMany({
    where: { id: args.id, locked_by: args.workerId },
    data: { locked_by: null, locked_until: null },
  });
}
