import { jobChannel } from './job-channel.ts';
import type { RawDb } from '../db/raw-db.ts';

/**
 * Gives jobs this worker leased back to the queue, due as they were, in one statement; only the
 * worker that holds a lease may. It notifies like a new job does (ADR 0038), so another pool with
 * room claims them now instead of at its next poll. Returns whether it notified (it gave a job
 * back): the caller's own listener will hear it.
 */
export async function releaseJobs(db: RawDb, args: { ids: readonly bigint[]; workerId: string }): Promise<boolean> {
  const notified = await db.$queryRaw<unknown[]>`
    with released as (
      update "sagaflow"."jobs"
         set locked_by = null, locked_until = null
       where id = any(${args.ids.map(String)}::text[]::bigint[]) and locked_by = ${args.workerId}
      returning kind)
    select pg_notify(${jobChannel}, kind)::text from (select distinct kind from released) k`;
  return notified.length > 0;
}
