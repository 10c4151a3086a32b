import { Prisma } from '../generated/prisma/client.ts';
import { ownerGoneSql } from './find-orphaned-steps.ts';
import { openRunStatusesSql } from './step-table.ts';
import type { Db } from './types.ts';

/** A run whose monitor-given stuck reason should now read `next` (null: it no longer holds). */
export interface StuckReasonChange {
  run_id: string;
  stuck_reason: string | null;
  next: string | null;
}

/** The kind of stuck reason a parent gets while a child it waits on is stuck (ADR 0124). */
export const childStuckKind = 'child_stuck';

/** The most of a child's own reason its parent's reason quotes: a chain of stuck runs stays readable. */
export const quotedChildReasonChars = 400;

/**
 * Runs marked `owner_gone` (ADR 0010) whose reason no longer holds (ADR 0124): none of their steps is
 * Running, with no reclaim deadline, under a worker that is gone (the same test as findOrphanedSteps). A
 * worker that was only frozen and beats again, a step that finished or was reclaimed: the run is not
 * stuck. Found through the stuck runs' partial index (a thin slice), `limit` of them, stalest first.
 */
export async function findOwnerGoneCleared(
  db: Db,
  args: { deadAfterSeconds: number; limit: number },
): Promise<StuckReasonChange[]> {
  const gone = ownerGoneSql(args.deadAfterSeconds);
  const orphan = (table: string) => Prisma.sql`
    select 1 from ${Prisma.raw(`"sagaflow"."${table}"`)} s left join "sagaflow"."workers" w on w.id = s.claimed_by
     where s.run_id = r.id and s.status = 'Running' and s.reclaim_stale_at is null and ${gone}`;
  return db.$queryRaw<StuckReasonChange[]>(Prisma.sql`
    select r.id::text as run_id, r.stuck_reason, null::text as next
      from "sagaflow"."flow_runs" r
     where r.stuck_reason is not null and split_part(r.stuck_reason, ':', 1) = 'owner_gone'
       and r.status in ${openRunStatusesSql}
       and not exists (${orphan('action_runs')}) and not exists (${orphan('compensation_runs')})
     order by r.updated_at
     limit ${args.limit}::int`);
}

/**
 * Parents whose `child_stuck` reason should change (ADR 0124), `limit` of each kind:
 * - a parent parked (Waiting) with no stuck reason while an open child of it is stuck: it gets
 *   `child_stuck: child run <id> is stuck (<the child's reason>)`;
 * - a parent with a `child_stuck` reason that no longer reads so: its stuck child moved on (null), or
 *   another child is now the stuck one, or the child's reason changed (a grandchild's chain grows).
 * The child named is the oldest stuck open child. Both branches start from the stuck runs' partial
 * indexes, so a pass reads the stuck slice, not the open runs. A chain of stuck runs becomes visible one
 * level per pass: a child marked in this pass makes its parent a candidate of the next one.
 */
export async function findChildStuckChanges(db: Db, args: { limit: number }): Promise<StuckReasonChange[]> {
  const reasonOf = (parent: Prisma.Sql) => Prisma.sql`(
      select ${childStuckKind} || ': child run ' || c.id::text || ' is stuck ('
             || left(c.stuck_reason, ${quotedChildReasonChars}::int) || ')'
        from "sagaflow"."flow_runs" c
       where c.parent_run_id = ${parent} and c.stuck_reason is not null and c.status in ${openRunStatusesSql}
       order by c.created_at, c.id limit 1)`;
  return db.$queryRaw<StuckReasonChange[]>(Prisma.sql`
    (select distinct on (p.id) p.id::text as run_id, p.stuck_reason, ${reasonOf(Prisma.sql`p.id`)} as next
       from "sagaflow"."flow_runs" c
       join "sagaflow"."flow_runs" p on p.id = c.parent_run_id
      where c.stuck_reason is not null and c.parent_run_id is not null and c.status in ${openRunStatusesSql}
        and p.status = 'Waiting' and p.stuck_reason is null
      order by p.id
      limit ${args.limit}::int)
    union all
    (select q.run_id, q.stuck_reason, q.next from (
       select p.id::text as run_id, p.stuck_reason, ${reasonOf(Prisma.sql`p.id`)} as next, p.updated_at
         from "sagaflow"."flow_runs" p
        where p.stuck_reason is not null and split_part(p.stuck_reason, ':', 1) = ${childStuckKind}
          and p.status in ${openRunStatusesSql}) q
      where q.stuck_reason is distinct from q.next
      order by q.updated_at
      limit ${args.limit}::int)`);
}
