import { Prisma } from '../generated/prisma/client.ts';
import { openRunStatusesSql } from './step-table.ts';
import type { Db } from './types.ts';

/** A run past its deadline, and where the next page starts (keyset on expires_at, id). */
export interface OverdueRun {
  id: string;
  expires_at: Date;
}

/**
 * The monitor's run candidates: open runs past their business deadline, not yet expired or being
 * cancelled, and not held off after a failed attempt (expiry_retry_at still ahead). Oldest deadline
 * first, after `after` and up to `upTo` when given, read through the partial index on such runs (migration 0015); a
 * run held off drops out of the page, so the runs behind it are reached.
 */
export async function findOverdueRuns(
  db: Db,
  args: { now: Date; limit: number; after?: OverdueRun | null; upTo?: OverdueRun | null },
): Promise<OverdueRun[]> {
  const after = args.after
    ? Prisma.sql`and (expires_at, id) > (${args.after.expires_at}::timestamptz, ${args.after.id}::uuid)`
    : Prisma.empty;
  const upTo = args.upTo
    ? Prisma.sql`and (expires_at, id) <= (${args.upTo.expires_at}::timestamptz, ${args.upTo.id}::uuid)`
    : Prisma.empty;
  return db.$queryRaw<OverdueRun[]>(Prisma.sql`
    select id::text as id, expires_at from "sagaflow"."flow_runs"
     where expires_at is not null and expires_at <= ${args.now}::timestamptz and expired_at is null
       and cancel_requested_at is null and status in ${openRunStatusesSql}
       and (expiry_retry_at is null or expiry_retry_at <= ${args.now}::timestamptz) ${after} ${upTo}
     order by expires_at, id
     limit ${args.limit}::int`);
}
