import type { SqlReader } from './sql-reader.ts';

export interface FailingCount {
  process: string;
  state: string;
  /**
   * ACTIVE instances that are failing: a failure record (a message failing, seed 002) or a timeout
   * whose delivery keeps throwing (ADR 0127). Quarantined ones are counted as quarantined instead.
   */
  instances: number;
  /** Their Pending timeouts that have failed at least once (ADR 0127). */
  timeouts: number;
}

/**
 * The failing ACTIVE instances by process and state, and their failing timeouts. Found by that fact,
 * not by a key: migration 0035's two partial indexes hold only the failed Pending timeouts and the
 * instances with a failure record, so the read grows with the failing rows, never with all instances.
 */
export async function readFailingCounts(db: SqlReader): Promise<FailingCount[]> {
  return db.$queryRaw<FailingCount[]>`
    with ft as (
      -- A timeout of a visit its instance has left is stale (ADR 0012), not failing (review 59).
      select t.instance_id, count(*)::int as n
        from "sagaflow"."process_timeouts" t
        join "sagaflow"."saga_instances" j
          on j.id = t.instance_id and j.current_state = t.expected_state and j.state_visit = t.armed_visit
       where t.status = 'Pending' and t.attempts > 0
       group by t.instance_id
    ), ids as (
      select instance_id as id from ft
      union
      select id from "sagaflow"."saga_instances" where failure_redelivery_key is not null
    )
    select i.process_name as process, i.current_state as state, count(*)::int as instances,
           coalesce(sum(ft.n), 0)::int as timeouts
      from ids
      join "sagaflow"."saga_instances" i on i.id = ids.id
      left join ft on ft.instance_id = i.id
     where i.status = 'ACTIVE'
     group by i.process_name, i.current_state
     order by i.process_name, i.current_state`;
}
