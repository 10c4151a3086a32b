import { Prisma } from '../generated/prisma/client.ts';
import { openRunStatusesSql, tableSql, type StepTable } from './step-table.ts';
import type { Db } from './types.ts';
import { statusIn } from './keyed-status.ts';

/** The step statuses a business deadline can still end; the partial index holds exactly these (migration 0015). */
const openStepStatuses = ['Pending', 'Running', 'Failed'];
// Constants in the text, not parameters: the sweeps' partial index has this predicate, and only a
// constant list proves it.
export const openStepStatusesSql = Prisma.raw(`(${openStepStatuses.map((s) => `'${s}'`).join(', ')})`);

/**
 * The monitor's step sweep, one batch in ONE statement: marks up to `limit` overdue actions or
 * compensations (business deadline passed, still Pending, Running or Failed, run open) Expired,
 * appends each one's history row and queues one wake per run. The write is conditional on the
 * status, so a step that completed just before the sweep reached it is not demoted, and a recorded
 * terminal state is never overwritten. Candidates come from the partial index on open steps
 * (`*_open_expires_at_idx`), oldest deadline first. SKIP LOCKED lets two sweepers share a backlog
 * without both expiring a row; the run row is locked FOR KEY SHARE (as lockOpenRun) so an expiry
 * never commits after the run's terminal event. The update finds the picked rows by primary key
 * (`= any(array(...))`): joined to the CTE, the planner hashed every open step of the table to
 * match a thousand (ADR 0036: 70 of a batch's 146 ms at 100 k overdue). Returns how many steps it expired,
 * and the runs of the first `limit` overdue steps it skipped as held.
 */
export async function expireOverdueSteps(db: Db, args: ExpireOverdueStepsArgs): Promise<ExpiredStepsBatch> {
  const rows = await db.$queryRaw<ExpiredStepsBatch[]>(expireOverdueStepsSql(args));
  return rows[0] ?? { expired: 0, held: [], taken: [] };
}

export interface ExpiredStepsBatch {
  expired: number;
  /**
   * Runs of the batch's first `limit` overdue steps that were skipped, their step's or their run's row held
   * by another session, and runs whose steps it expired: for ADR 0137's count of runs held for good.
   */
  held: string[];
  taken: string[];
}

export interface ExpireOverdueStepsArgs {
  table: StepTable;
  now: Date;
  limit: number;
}

/** The statement itself, apart so a test can EXPLAIN exactly what the sweep runs. */
export function expireOverdueStepsSql(args: ExpireOverdueStepsArgs): Prisma.Sql {
  const t = tableSql(args.table);
  const sequence = Prisma.raw(args.table === 'action_runs' ? 's.sequence' : 's.action_sequence');
  const type = args.table === 'action_runs' ? 'action.expired' : 'compensation.expired';
  return Prisma.sql`
    with seen as (
      select c.id, c.run_id from ${t} c
        join "sagaflow"."flow_runs" r on r.id = c.run_id and r.status in ${openRunStatusesSql}
       where c.expires_at is not null and c.expires_at <= ${args.now}::timestamptz and c.status in ${openStepStatusesSql}
       order by c.expires_at
       limit ${args.limit}::int
    ), picked as (
      select c.id from ${t} c
        join "sagaflow"."flow_runs" r on r.id = c.run_id and r.status in ${openRunStatusesSql}
       where c.expires_at is not null and c.expires_at <= ${args.now}::timestamptz and c.status in ${openStepStatusesSql}
       order by c.expires_at
       limit ${args.limit}::int
         for update of c skip locked
         for key share of r skip locked
    ), done as (
      update ${t} s
         set status = 'Expired', reclaim_stale_at = null, updated_at = ${args.now}::timestamptz,
             finished_at = ${args.now}::timestamptz,
             error = jsonb_build_object('name', 'StepExpired', 'message', 'the step''s business deadline passed at ' || s.expires_at::text)
       where s.id = any(array(select id from picked)) and ${statusIn('s.status', openStepStatuses)}
      returning s.id, s.run_id, ${sequence} as sequence, s.name
    ), history as (
      insert into "sagaflow"."flow_events" (run_id, type, sequence, row_id, data)
      select d.run_id, ${type}, d.sequence, d.id, jsonb_build_object('name', d.name) from done d
    ), wakes as (
      insert into "sagaflow"."jobs" (kind, run_id, available_at)
      select distinct 'wake-run', d.run_id, ${args.now}::timestamptz from done d
    )
    select (select count(*)::int from done) as expired,
           coalesce((select json_agg(distinct s.run_id::text) from seen s
                      where s.id <> all(array(select id from picked))), '[]'::json) as held,
           coalesce((select json_agg(distinct d.run_id::text) from done d), '[]'::json) as taken`;
}
