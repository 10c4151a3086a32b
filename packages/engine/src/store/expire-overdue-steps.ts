import { Prisma } from '../generated/prisma/client.ts';
import { openRunStatusesSql, tableSql, type StepTable } from './step-table.ts';
import type { Db } from './types.ts';

/**
 * The monitor's step sweep: marks up to `limit` overdue actions or compensations (business
 * deadline `expires_at` passed, still Pending, Running or Failed, run open) Expired, with a
 * conditional write, so a step that completed just before the sweep reached it is not demoted.
 * SKIP LOCKED lets two sweepers share the page; a run being finished right now is skipped. Returns
 * the rows it expired.
 */
export async function expireOverdueSteps(
  db: Db,
  args: { table: StepTable; now: Date; limit: number },
): Promise<{ id: string; run_id: string; sequence: number; name: string }[]> {
  const t = tableSql(args.table);
  const sequence = Prisma.raw(args.table === 'action_runs' ? 's.sequence' : 's.action_sequence');
  return db.$queryRaw(Prisma.sql`
    update ${t} s
       set status = 'Expired', reclaim_stale_at = null, updated_at = ${args.now}::timestamptz, finished_at = ${args.now}::timestamptz,
           error = jsonb_build_object('name', 'StepExpired', 'message', 'the step''s business deadline passed at ' || s.expires_at::text)
     where s.id in (
       select c.id from ${t} c
         join "sagaflow"."flow_runs" r on r.id = c.run_id and r.status in ${openRunStatusesSql}
        where c.expires_at <= ${args.now}::timestamptz and c.status in ('Pending', 'Running', 'Failed')
        order by c.expires_at
        limit ${args.limit}::int
        for update of c skip locked
        -- the run row too (lockOpenRun): an expiry never commits after the run's terminal event
        for key share of r skip locked)
       and s.status in ('Pending', 'Running', 'Failed')
    returning s.id::text as id, s.run_id::text as run_id, ${sequence} as sequence, s.name`);
}
