import type { RawDb } from '../db/raw-db.ts';
import { openRunByKey } from './keyed-status.ts';

/** How many of the root's own children the answer lists by id; past them, a count (ADR 0136). */
export const childrenListed = 1000;

/**
 * Requests the cancellation of every open 'propagate' descendant of `rootId`, one statement per level of
 * the tree however wide it is (ADR 0125; ADR 0136's addendum), what `cancelTree` did one run and five
 * statements at a time: the root's children, then the children of each run this recorded a request on,
 * and so on (a run already requested is left as it is, and so is what is under it: its own request
 * reached it), each with its own reason (`parent <its parent> was cancelled: <the parent's reason>`), its
 * `run.cancel_requested` event and its two wakes (now, and when its cleanup window closes), level by
 * level, in id order within a level. The root's own request is the caller's, made first. Returns how
 * many runs it reached, how many of them are the root's own children, and the first
 * {@link childrenListed} of those in id order. A cancel of a parent of thousands of children no longer
 * outlasts the operator's transaction (review 49), nor does an expiry's or a run's end over as many.
 *
 * With `terminated` (a terminate's fence, ADR 0125), the reasons say so, the deadline is the
 * terminate's `now` (the cleanup window already closed), and neither an event (each run's
 * `run.terminated` says its end) nor a wake is written: a replay of any of them from then on closes it
 * instead of running its code while the terminate ends them a batch at a time, and were the terminate
 * to stop between batches, none is driven on to a new step.
 */
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
  let parents = [args.rootId];
  let reached = 0;
  let first: string[] = [];
  for (let depth = 1; parents.length > 0; depth++) {
    // One level a statement: each statement reads the tree afresh, after the previous one waited for the rows
    // it asked (review 64: one recursive statement read the whole tree before it waited for a child whose
    // own child's start held it, and so never saw that grandchild, which then ran on).
    const level = await requestLevel(db, args, parents, depth === 1 ? childReason : null, ended);
    reached += level.length;
    if (depth === 1) first = level;
    parents = level;
  }
  return { reached, children: first.slice(0, childrenListed), childCount: first.length };
}

/**
 * Asks the open 'propagate' children of `parents` (runs this command asked, or the root) that are not yet
 * asked, in one statement: each one's request (its reason: `reason` for the root's own children, else
 * `parent <its parent> was cancelled: <the parent's reason>`), its `run.cancel_requested` event and its two
 * wakes, in id order. A child another session holds is waited for and then judged again, so a child whose
 * start held its parent when this level was read is seen by the next level's statement: a start that comes
 * after finds its parent asked, and asks the child itself (child-step.ts). Answers the ids it asked, in id
 * order.
 */
async function requestLevel(
  db: RawDb,
  args: { now: Date; deadline: Date; terminated?: boolean },
  parents: string[],
  reason: string | null,
  ended: string,
): Promise<string[]> {
  const [row] = await db.$queryRaw<{ ids: string[] | null }[]>`
    with requested as (
      update "sagaflow"."flow_runs" r
         set cancel_requested_at = ${args.now}::timestamptz,
             cancel_reason = coalesce(${reason}::text, 'parent ' || p.id::text || ${ended}::text || coalesce(p.cancel_reason, '')),
             cancel_deadline_at = ${args.deadline}::timestamptz, updated_at = ${args.now}::timestamptz,
             version = r.version + 1
        from "sagaflow"."flow_runs" p
       where p.id = any(${parents}::uuid[]) and r.parent_run_id = p.id and r.parent_cancel_policy = 'propagate'
         and r.cancel_requested_at is null and ${openRunByKey('r.status')}
      returning r.id, r.cancel_reason
    ), events as (
      insert into "sagaflow"."flow_events" (run_id, type, data)
      select q.id, 'run.cancel_requested',
             jsonb_build_object('reason', q.cancel_reason, 'cleanup_until', ${args.deadline.toISOString()}::text)
        from requested q
       where not ${args.terminated === true}::boolean
       order by q.id
    ), wakes as (
      insert into "sagaflow"."jobs" (kind, run_id, available_at)
      select 'wake-run', q.id, w.at
        from requested q cross join (values (${args.now}::timestamptz, 1), (${args.deadline}::timestamptz, 2)) w (at, o)
       where not ${args.terminated === true}::boolean
       order by q.id, w.o
    )
    select array_agg(q.id::text order by q.id) as ids from requested q`;
  return row?.ids ?? [];
}

/**
 * The descendants {@link requestDescendantsCancel} would ask now, depth first in id order: the open
 * 'propagate' ones not yet asked, reached through runs not yet asked (one already asked is left as it is,
 * with what is under it). What a cancel's or an expiry's preview lists, so that it lists the requests the
 * command makes (review 64), not every open descendant.
 */
export async function listCancelReach(db: RawDb, rootId: string): Promise<string[]> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    with recursive tree (id, path) as (
      select c.id, array[c.id] from "sagaflow"."flow_runs" c
       where c.parent_run_id = ${rootId}::uuid and c.parent_cancel_policy = 'propagate'
         and c.cancel_requested_at is null and ${openRunByKey('c.status')}
      union all
      select c.id, t.path || c.id from "sagaflow"."flow_runs" c join tree t on c.parent_run_id = t.id
       where c.parent_cancel_policy = 'propagate' and c.cancel_requested_at is null and ${openRunByKey('c.status')}
    )
    select id::text as id from tree order by path`;
  return rows.map((r) => r.id);
}
