import type { RawDb } from '../db/raw-db.ts';
import { openRunByKey } from './keyed-status.ts';

/**
 * Requests the cancellation of every open 'propagate' descendant of `rootId` in ONE statement (ADR
 * 0125), what `cancelTree` did one run and five statements at a time: a recursive walk down from the
 * root's children, through each run whose request this records (a run already requested is left as
 * it is, and so is what is under it: its own request reached it), each with its own reason (`parent
 * <its parent> was cancelled: <the parent's reason>`), its `run.cancel_requested` event and its two
 * wakes (now, and when its cleanup window closes), in the tree's depth-first order. The root's own
 * request is the caller's, made first. Returns how many runs it reached, how many of them are the
 * root's own children, and the first {@link childrenListed} of those in id order. However wide the tree, one statement: a cancel of a parent of thousands of
 * children no longer outlasts the operator's transaction (review 49), nor does an expiry's or a run's
 * end over as many (ADR 0136).
 *
 * With `terminated` (a terminate's fence, ADR 0125), the reasons say so, the deadline is the
 * terminate's `now` (the cleanup window already closed), and neither an event (each run's
 * `run.terminated` says its end) nor a wake is written: a replay of any of them from then on closes it
 * instead of running its code while the terminate ends them a batch at a time, and were the terminate
 * to stop between batches, none is driven on to a new step.
 */
/** How many of the root's own children the answer lists by id; past them, a count (ADR 0136). */
export const childrenListed = 1000;

export async function requestDescendantsCancel(
  db: RawDb,
  args: {
    rootId: string;
    reason: string;
    deadline: Date;
    now: Date;
    terminated?: boolean;
    /**
     * The reason the root's own children get, when the root did not end by a cancel or a terminate
     * (`parent <root> expired: …`, `parent <root> ended Failed before this run finished`); by default
     * `parent <root> was cancelled: <reason>`. Deeper runs say their parent was cancelled (terminated).
     */
    childReason?: string;
  },
): Promise<{ reached: number; children: string[]; childCount: number }> {
  const ended = args.terminated ? ' was terminated: ' : ' was cancelled: ';
  const childReason = args.childReason ?? `parent ${args.rootId}${ended}${args.reason}`;
  const [row] = await db.$queryRaw<{ n: number; children: string[] | null; child_count: number }[]>`
    with recursive tree (id, reason, path, fresh) as (
      select c.id, ${childReason}::text, array[c.id],
             c.cancel_requested_at is null
        from "sagaflow"."flow_runs" c
       where c.parent_run_id = ${args.rootId}::uuid and c.parent_cancel_policy = 'propagate' and ${openRunByKey('c.status')}
      union all
      select c.id, 'parent ' || t.id::text || ${ended}::text || t.reason, t.path || c.id, c.cancel_requested_at is null
        from "sagaflow"."flow_runs" c join tree t on c.parent_run_id = t.id
       where t.fresh and c.parent_cancel_policy = 'propagate' and ${openRunByKey('c.status')}
    ), requested as (
      update "sagaflow"."flow_runs" r
         set cancel_requested_at = ${args.now}::timestamptz, cancel_reason = t.reason,
             cancel_deadline_at = ${args.deadline}::timestamptz, updated_at = ${args.now}::timestamptz,
             version = r.version + 1
        from tree t
       where r.id = t.id and t.fresh and r.cancel_requested_at is null and ${openRunByKey('r.status')}
      returning r.id, t.reason, t.path
    ), events as (
      insert into "sagaflow"."flow_events" (run_id, type, data)
      select q.id, 'run.cancel_requested',
             jsonb_build_object('reason', q.reason, 'cleanup_until', ${args.deadline.toISOString()}::text)
        from requested q
       where not ${args.terminated === true}::boolean
       order by q.path
    ), wakes as (
      insert into "sagaflow"."jobs" (kind, run_id, available_at)
      select 'wake-run', q.id, w.at
        from requested q cross join (values (${args.now}::timestamptz, 1), (${args.deadline}::timestamptz, 2)) w (at, o)
       where not ${args.terminated === true}::boolean
       order by q.path, w.o
    )
    select count(*)::int as n,
           count(*) filter (where cardinality(q.path) = 1)::int as child_count,
           (array_agg(q.id::text order by q.id) filter (where cardinality(q.path) = 1))[1:${childrenListed}::int] as children
      from requested q`;
  return { reached: row?.n ?? 0, children: row?.children ?? [], childCount: row?.child_count ?? 0 };
}
