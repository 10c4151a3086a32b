import type { Db } from './types.ts';

/** A job to acknowledge, and whether a transaction that committed already did (`done`). */
export interface JobAck {
  id: bigint;
  workerId: string;
  done: boolean;
}

/** Acknowledges a job; only the worker that holds its lease may. */
export async function deleteJob(db: Db, args: { id: bigint; workerId: string }): Promise<void> {
  await db.job.deleteMany({ where: { id: args.id, locked_by: args.workerId } });
}
