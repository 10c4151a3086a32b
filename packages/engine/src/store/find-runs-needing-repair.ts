import { openRunStatusesSql } from './step-table.ts';
import type { Db } from './types.ts';

export interface RepairCandidate {
  run_id: string;
  rule: 'R1' | 'R2' | 'R3';
  detail: string;
}

/**
 * The doctor's three rules (seed 000), for open runs that have no job queued and repair budget left:
 * R1 a run still Pending past the grace (its start job was lost); R2 a run whose signal or timer
 * wait, or an action's retry, is due (its wake was lost); R3 an ordinary (non-parallel) Running action past its
 * reclaim deadline (its worker died). Compensations and parallel actions stay passive.
 */
export async function findRunsNeedingRepair(
  db: Db,
  args: { now: Date; graceSeconds: number; budget: number; staleRunning: boolean; limit: number },
): Promise<RepairCandidate[]> {
  return db.$queryRaw<RepairCandidate[]>`
    select r.id::text as run_id, c.rule, c.detail
      from "sagaflow"."flow_runs" r
      cross join lateral (
        select 'R1' as rule, 'Pending since ' || r.created_at::text as detail
         where r.status = 'Pending' and r.created_at <= ${args.now}::timestamptz - make_interval(secs => ${args.graceSeconds}::int)
        union all
        select 'R2', 'step ' || s.sequence || ' (' || s.kind || ' ' || s.name || ') due at ' || s.wake_at::text
          from "sagaflow"."action_runs" s
         where s.run_id = r.id and s.status = 'Waiting' and s.kind in ('signal', 'timer') and s.wake_at <= ${args.now}::timestamptz
        union all
        select 'R2', 'step ' || s.sequence || ' (' || s.name || ') retry due at ' || s.available_at::text
          from "sagaflow"."action_runs" s
         where s.run_id = r.id and s.status = 'Failed' and s.available_at <= ${args.now}::timestamptz
        union all
        select 'R3', 'step ' || s.sequence || ' (' || s.name || ') stale since ' || s.reclaim_stale_at::text
          from "sagaflow"."action_runs" s
         where ${args.staleRunning} and s.run_id = r.id and s.status = 'Running' and s.parallel_block is null
           and s.reclaim_stale_at is not null and s.reclaim_stale_at < ${args.now}::timestamptz
        limit 1) c
     where r.status in ${openRunStatusesSql}
       and r.repair_count < ${args.budget}::int
       and not exists (select 1 from "sagaflow"."jobs" j where j.run_id = r.id)
     order by r.updated_at
     limit ${args.limit}::int`;
}
