import type { RawDb } from '../db/raw-db.ts';
import { Prisma } from '../generated/prisma/client.ts';
import { inherited } from './inherited-reason.ts';
import { openRunByKey } from './keyed-status.ts';

/** How many of the root's own children the answer lists by id; past them, a count (ADR 0136). */
export const childrenListed = 1000;

/**
 * Requests the cancellation of every open 'propagate' descendant of `rootId` (ADR 0125, ADR 0136 and its
 * addenda), what `cancelTree` did one run and five statements at a time: in ONE recursive statement
 * however wide or deep the tree, each run whose request this records (a run already requested is left as
 * it is, and so is what is under it: its own request reached it) with its own reason (`parent <its
 * parent> was cancelled: <the parent's reason>`), its `run.cancel_requested` event and its two wakes (now,
 * and when its cleanup window closes), level by level, in id order within a level (a path per run, for a
 * depth-first order, cost time and memory with the square of a chain's depth: review 65). Then as many catch-up statements as it takes, each over
 * the children of the runs the statement before asked: that statement read the tree before it waited for
 * the rows it asked, and a run whose start held its parent then committed meanwhile, unseen (review 64). A
 * start after a parent was asked waits for this transaction and asks its child itself (child-step.ts), so
 * a catch-up that asks nobody ends it: two statements in all, as a rule. The root's own request is the
 * caller's, made first (and the root is held, so no child of its own is started meanwhile). Returns how
 * many runs it reached, how many of them are the root's own children, and the first
 * {@link childrenListed} of those in id order. A cancel of a parent of thousands of children no longer
 * outlasts the operator's transaction (review 49), nor does an expiry's or a run's end over as many, nor
 * over a chain thousands deep (review 65).
 *
 * With `terminated` (a terminate's fence, ADR 0125), the reasons say so, the deadline is the
 * terminate's `now`, and neither an event (each run's `run.terminated` says its end) nor a wake is
 * written: a replay of any of them from then on closes it instead of running its code while the terminate
 * ends them a batch at a time, and were the terminate to stop between batches, none is driven on to a new
 * step. The fence also closes the cleanup window of a descendant asked to cancel before (it keeps its
 * reason), and goes under it: a cancelled child's compensations are not run after its parent's terminate
 * (review 65).
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
  const tree = await requestTree(db, args, childReason, ended);
  let reached = tree.asked.length;
  for (let parents = tree.asked; parents.length > 0;) {
    parents = await requestLevel(db, args, parents, ended);
    reached += parents.length;
  }
  return { reached, children: tree.children, childCount: tree.childCount };
}

/**
 * Whether the run `r` is one a request reaches: not asked yet; or, for a terminate's fence, its cleanup
 * window still open (asked before, by a cancel of it or of an ancestor).
 */
const reachable = (r: string, args: { now: Date; terminated?: boolean }) =>
  args.terminated
    ? Prisma.sql`(${Prisma.raw(r)}.cancel_deadline_at is null or ${Prisma.raw(r)}.cancel_deadline_at > ${args.now}::timestamptz)`
    : Prisma.sql`${Prisma.raw(r)}.cancel_requested_at is null`;

/**
 * The runs the tree's walk goes through: the open ones; and, for a terminate's fence, closed ones that were
 * asked to cancel or terminated too, as its batches walk (`listTreeToTerminate`): a run asked to cancel before
 * the terminate and closed at its window may have an open child still in its own cleanup window, which the
 * fence must close too (review 67). Only the open ones are asked.
 */
const walkedThrough = (r: string, args: { terminated?: boolean }) =>
  args.terminated
    ? Prisma.sql`(${openRunByKey(`${r}.status`)} or ${Prisma.raw(r)}.status = 'Terminated' or ${Prisma.raw(r)}.cancel_requested_at is not null)`
    : openRunByKey(`${r}.status`);

/** The one recursive statement over the whole tree; answers every run it asked, and the root's children. */
async function requestTree(
  db: RawDb,
  args: { rootId: string; now: Date; deadline: Date; terminated?: boolean },
  childReason: string,
  ended: string,
): Promise<{ asked: string[]; children: string[]; childCount: number }> {
  const [row] = await db.$queryRaw<{ asked: string[] | null; children: string[] | null; child_count: number }[]>`
    with recursive tree (id, reason, depth, fresh) as (
      select c.id, ${childReason}::text, 1, ${reachable('c', args)}
        from "sagaflow"."flow_runs" c
       where c.parent_run_id = ${args.rootId}::uuid and c.parent_cancel_policy = 'propagate' and ${walkedThrough('c', args)}
      union all
      select c.id, 'parent ' || t.id::text || ${ended}::text || ${inherited('t.reason')}, t.depth + 1, ${reachable('c', args)}
        from "sagaflow"."flow_runs" c join tree t on c.parent_run_id = t.id
       where (t.fresh or ${args.terminated === true}::boolean)
         and c.parent_cancel_policy = 'propagate' and ${walkedThrough('c', args)}
    ), requested as (
      update "sagaflow"."flow_runs" r
         set cancel_requested_at = coalesce(r.cancel_requested_at, ${args.now}::timestamptz),
             cancel_reason = coalesce(r.cancel_reason, t.reason),
             cancel_deadline_at = ${args.deadline}::timestamptz, updated_at = ${args.now}::timestamptz,
             version = r.version + 1
        from tree t
       where r.id = t.id and t.fresh and ${reachable('r', args)} and ${openRunByKey('r.status')}
      returning r.id, r.cancel_reason, t.depth
    ), events as (
      insert into "sagaflow"."flow_events" (run_id, type, data)
      select q.id, 'run.cancel_requested',
             jsonb_build_object('reason', q.cancel_reason, 'cleanup_until', ${args.deadline.toISOString()}::text)
        from requested q
       where not ${args.terminated === true}::boolean
       order by q.depth, q.id
    ), wakes as (
      insert into "sagaflow"."jobs" (kind, run_id, available_at)
      select 'wake-run', q.id, w.at
        from requested q cross join (values (${args.now}::timestamptz, 1), (${args.deadline}::timestamptz, 2)) w (at, o)
       where not ${args.terminated === true}::boolean
       order by q.depth, q.id, w.o
    )
    select array_agg(q.id::text) as asked,
           count(*) filter (where q.depth = 1)::int as child_count,
           (array_agg(q.id::text order by q.id) filter (where q.depth = 1))[1:${childrenListed}::int] as children
      from requested q`;
  return { asked: row?.asked ?? [], children: row?.children ?? [], childCount: row?.child_count ?? 0 };
}

/**
 * A catch-up: asks the open 'propagate' children of `parents` (runs the statement before asked) that it
 * did not reach, in one statement, each with its reason (`parent <its parent> was cancelled: <the
 * parent's reason>`), its event and its two wakes, in id order. Answers the ids it asked.
 */
async function requestLevel(
  db: RawDb,
  args: { now: Date; deadline: Date; terminated?: boolean },
  parents: string[],
  ended: string,
): Promise<string[]> {
  const [row] = await db.$queryRaw<{ ids: string[] | null }[]>`
    with requested as (
      update "sagaflow"."flow_runs" r
         set cancel_requested_at = coalesce(r.cancel_requested_at, ${args.now}::timestamptz),
             cancel_reason = coalesce(r.cancel_reason, 'parent ' || p.id::text || ${ended}::text || ${inherited("coalesce(p.cancel_reason, '')")}),
             cancel_deadline_at = ${args.deadline}::timestamptz, updated_at = ${args.now}::timestamptz,
             version = r.version + 1
        from "sagaflow"."flow_runs" p
       where p.id = any(${parents}::uuid[]) and r.parent_run_id = p.id and r.parent_cancel_policy = 'propagate'
         and ${reachable('r', args)} and ${openRunByKey('r.status')}
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
 * The descendants {@link requestDescendantsCancel} would ask now, level by level in id order: the open
 * 'propagate' ones not yet asked, reached through runs not yet asked (one already asked is left as it is,
 * with what is under it). What a cancel's or an expiry's preview lists, so that it lists the requests the
 * command makes (review 64), not every open descendant.
 */
export async function listCancelReach(db: RawDb, rootId: string): Promise<string[]> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    with recursive tree (id, depth) as (
      select c.id, 1 from "sagaflow"."flow_runs" c
       where c.parent_run_id = ${rootId}::uuid and c.parent_cancel_policy = 'propagate'
         and c.cancel_requested_at is null and ${openRunByKey('c.status')}
      union all
      select c.id, t.depth + 1 from "sagaflow"."flow_runs" c join tree t on c.parent_run_id = t.id
       where c.parent_cancel_policy = 'propagate' and c.cancel_requested_at is null and ${openRunByKey('c.status')}
    )
    select id::text as id from tree order by depth, id`;
  return rows.map((r) => r.id);
}
