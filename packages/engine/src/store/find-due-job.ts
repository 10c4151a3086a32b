import type { RawDb } from '../db/raw-db.ts';

/**
 * Whether the queue holds a job a claim at `now` would lease (due, and unleased or its lease run
 * out): the same predicate as {@link claimJobs}, read without leasing. A pool whose every slot is
 * taken asks this instead of claiming, so it knows whether a start may still skip the queue; being a
 * read, it assigns no transaction id (ADR 0060).
 */
export async function findDueJob(db: RawDb, args: { now: Date }): Promise<boolean> {
  const rows = await db.$queryRaw<{ due: boolean }[]>`
    select exists (
      select 1 from "sagaflow"."jobs"
       where available_at <= ${args.now}::timestamptz and (locked_until is null or locked_until < ${args.now}::timestamptz)
    ) as due`;
  return rows[0]?.due === true;
}
