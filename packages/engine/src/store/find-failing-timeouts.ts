import { statusIn } from './keyed-status.ts';
import type { Db } from './types.ts';

/** A Pending timeout whose delivery has thrown at least once (ADR 0127). */
export interface DbFailingTimeout {
  instance_id: string;
  id: string;
  name: string;
  attempts: number;
  last_error: string | null;
  first_failed_at: Date | null;
  retry_at: Date | null;
  due_at: Date;
  /** How many of the instance's timeouts are failing, this one included. */
  failing: number;
}

/**
 * The failing timeout of each of these instances (the one failing longest when several are), found
 * by their ids through the (instance_id) index: the status is tested in a form no index serves (ADR
 * 0098). A timeout that was then delivered (or cancelled) is not failing any more.
 */
export async function findFailingTimeouts(
  db: Db,
  instanceIds: readonly string[],
): Promise<Map<string, DbFailingTimeout>> {
  if (instanceIds.length === 0) return new Map();
  const rows = await db.$queryRaw<DbFailingTimeout[]>`
    select distinct on (instance_id)
           instance_id::text as instance_id, id::text as id, name, attempts, last_error, first_failed_at, retry_at,
           due_at, (count(*) over (partition by instance_id))::int as failing
      from "sagaflow"."process_timeouts"
     where instance_id = any(${instanceIds as string[]}::uuid[]) and ${statusIn('status', ['Pending'])} and attempts > 0
     order by instance_id, coalesce(first_failed_at, due_at), id`;
  return new Map(rows.map((r) => [r.instance_id, r]));
}
