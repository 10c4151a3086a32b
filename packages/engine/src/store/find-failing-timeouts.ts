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
 * 0098). A timeout that was then delivered (or cancelled) is not failing any more, and neither is one
 * of a visit the instance has left (ADR 0012: stale, its next try a no-op): an instance an operator moved
 * on, or that finished, is not shown failing on it until that try (review 59).
 */
export async function findFailingTimeouts(
  db: Db,
  instanceIds: readonly string[],
): Promise<Map<string, DbFailingTimeout>> {
  if (instanceIds.length === 0) return new Map();
  const rows = await db.$queryRaw<DbFailingTimeout[]>`
    select distinct on (t.instance_id)
           t.instance_id::text as instance_id, t.id::text as id, t.name, t.attempts, t.last_error, t.first_failed_at,
           t.retry_at, t.due_at, (count(*) over (partition by t.instance_id))::int as failing
      from "sagaflow"."process_timeouts" t
     where t.instance_id = any(${instanceIds as string[]}::uuid[]) and ${statusIn('t.status', ['Pending'])} and t.attempts > 0
       and exists (select 1 from "sagaflow"."saga_instances" i
                    where i.id = t.instance_id and i.status <> 'COMPLETED'
                      and i.current_state = t.expected_state and i.state_visit = t.armed_visit)
     order by t.instance_id, coalesce(t.first_failed_at, t.due_at), t.id`;
  return new Map(rows.map((r) => [r.instance_id, r]));
}
