import type { RawDb } from '../db/raw-db.ts';

/** A job to acknowledge, and whether a transaction that committed already did (`done`). */
export interface JobAck {
  id: bigint;
  workerId: string;
  done: boolean;
}

/** Acknowledges a job; only the worker that holds its lease may. */
export async function deleteJob(db: RawDb, args: { id: bigint; workerId: string }): Promise<void> {
  await db.$executeRaw`
    delete from "sagaflow"."jobs" where id = ${args.id}::bigint and locked_by = ${args.workerId}`;
}
