import { Prisma } from '../generated/prisma/client.ts';

/** Where a doctor pass resumes: run ids above this one (keyset); the nil uuid starts from the first. */
export const firstRunId = '00000000-0000-0000-0000-000000000000';

export interface RepairCandidatesArgs {
  now: Date;
  graceSeconds: number;
  staleRunning: boolean;
  /** Only runs whose id is above this one. */
  after: string;
  /** Rows per rule, and in all; null = every candidate (for counting). */
  limit: number | null;
}

/**
 * The doctor's three rules (seed 000) as candidate rows (run_id, rank, rule, detail), one branch per
 * rule, each read in run-id order through its own partial index (migration 0015), so a batch costs
 * its size and a pass walks the backlog once by keyset instead of re-reading every open run:
 * R1 a run still Pending past the grace (its start job was lost); R2 a signal or timer wait, or an
 * action's retry, that is due (its wake was lost); R3 an ordinary (non-parallel) Running action past
 * its reclaim deadline (its worker died); and (R2 too) a run stuck past the grace because no worker
 * had its flow or its version (ADR 0112: its wake is handed back and stays queued, so this finds only
 * a run whose wake is gone, one parked by an engine before that ADR, say); stuck runs are a thin
 * slice, which the stuck runs' partial indexes hold (migration 0018). Compensations and parallel
 * actions stay passive. `rank` orders the rules of one run as the doctor prefers them. Whether the run is open, has budget left
 * and has no job queued is checked where the candidate is used.
 */
export function repairCandidatesSql(args: RepairCandidatesArgs): Prisma.Sql {
  const after = Prisma.sql`${args.after}::uuid`;
  const limit = args.limit === null ? Prisma.empty : Prisma.sql`limit ${args.limit}::int`;
  const now = Prisma.sql`${args.now}::timestamptz`;
  return Prisma.sql`
    (select r.id as run_id, 1 as rank, 'R1' as rule, 'Pending since ' || r.created_at::text as detail
       from "sagaflow"."flow_runs" r
      where r.status = 'Pending' and r.id > ${after}
        and r.created_at <= ${now} - make_interval(secs => ${args.graceSeconds}::int)
      order by r.id ${limit})
    union all
    (select s.run_id, 2, 'R2', 'step ' || s.sequence || ' (' || s.kind || ' ' || s.name || ') due at ' || s.wake_at::text
       from "sagaflow"."action_runs" s
      where s.status = 'Waiting' and s.kind in ('signal', 'timer') and s.run_id > ${after} and s.wake_at <= ${now}
      order by s.run_id ${limit})
    union all
    (select s.run_id, 3, 'R2', 'step ' || s.sequence || ' (' || s.name || ') retry due at ' || s.available_at::text
       from "sagaflow"."action_runs" s
      where s.status = 'Failed' and s.run_id > ${after} and s.available_at <= ${now}
      order by s.run_id ${limit})
    union all
    (select s.run_id, 4, 'R3', 'step ' || s.sequence || ' (' || s.name || ') stale since ' || s.reclaim_stale_at::text
       from "sagaflow"."action_runs" s
      where ${args.staleRunning} and s.status = 'Running' and s.parallel_block is null
        and s.reclaim_stale_at is not null and s.run_id > ${after} and s.reclaim_stale_at < ${now}
      order by s.run_id ${limit})
    union all
    (select r.id, 5, 'R2', 'stuck since ' || r.updated_at::text || ': ' || r.stuck_reason
       from "sagaflow"."flow_runs" r
      where r.stuck_reason is not null and r.status in ('Waiting', 'Compensating') and r.id > ${after}
        and split_part(r.stuck_reason, ':', 1) in ('unknown_flow', 'no_worker_for_version')
        and r.updated_at <= ${now} - make_interval(secs => ${args.graceSeconds}::int)
      order by r.id ${limit})`;
}
