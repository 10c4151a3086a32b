import { openRunStatusesSql } from './step-table.ts';
import type { Db } from './types.ts';

/**
 * The monitor's run candidates: open runs past their business deadline, not yet expired or being
 * cancelled, and not held off after a failed attempt (expiry_retry_at still ahead). Oldest deadline
 * first; a run held off drops out of the page, so the runs behind it are reached.
 */
export async function findOverdueRuns(db: Db, args: { now: Date; limit: number }): Promise<string[]> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    select id::text as id from "sagaflow"."flow_runs"
     where expires_at <= ${args.now}::timestamptz and expired_at is null and cancel_requested_at is null
       and status in ${openRunStatusesSql}
       and (expiry_retry_at is null or expiry_retry_at <= ${args.now}::timestamptz)
     order by expires_at, id
     limit ${args.limit}::int`;
  return rows.map((r) => r.id);
}
