import { Prisma } from '../../generated/prisma/client.ts';
import { terminalRunStatuses } from '../types.ts';
import { openRunByKey } from '../keyed-status.ts';

const terminalRunStatusesSql = Prisma.sql`(${Prisma.join([...terminalRunStatuses])})`;

/**
 * The ids (as text) of the runs, instances or outbox rows an open approval names: a pending one, or a bulk being
 * applied. A second operator may still act on them, so retention keeps them until it is decided.
 * A single command names its target in `payload.target`, a bulk in `payload.items[].target`.
 */
function heldTargetsSql(key: 'runId' | 'instanceId' | 'outboxId'): Prisma.Sql {
  return Prisma.sql`
    select a.payload->'target'->>${key} as id from "sagaflow"."repair_approvals" a
     where a.status in ('pending', 'applying')
    union all
    select i->'target'->>${key} from "sagaflow"."repair_approvals" a
     cross join lateral jsonb_array_elements(
       case when jsonb_typeof(a.payload->'items') = 'array' then a.payload->'items' else '[]'::jsonb end) i
     where a.status in ('pending', 'applying')`;
}

/**
 * The runs retention may delete, with everything they own: finished before the cutoff, and nothing
 * open still needs them. An open parent settles its child step from the child, an open child reports
 * to its parent, and an open approval may still be applied to the run: each keeps the run. The run's
 * own row lock (taken by the deleting batch) serialises with a repair in flight.
 */
export function prunableRunsWhere(cutoff: Date): Prisma.Sql {
  return Prisma.sql`
        r.status in ${terminalRunStatusesSql}
    and r.finished_at < ${cutoff}::timestamptz
    and not exists (select 1 from "sagaflow"."flow_runs" p
                     where p.id = r.parent_run_id and ${openRunByKey('p.status')})
    and not exists (select 1 from "sagaflow"."flow_runs" c
                     where c.parent_run_id = r.id and ${openRunByKey('c.status')})
    and not exists (select 1 from (${heldTargetsSql('runId')}) h where h.id = r.id::text)`;
}

/**
 * The transitions retention may delete: the history of instances COMPLETED before the cutoff. An
 * ACTIVE instance (ManualReview included: it is not a final state) and a QUARANTINED one keep all
 * of theirs, as does one an open approval names. The instance row itself is never deleted: it is
 * what makes a late redelivery of its messages find a finished instance instead of starting anew.
 */
export function prunableTransitionsWhere(cutoff: Date): Prisma.Sql {
  return Prisma.sql`
        t.at < ${cutoff}::timestamptz
    and exists (select 1 from "sagaflow"."saga_instances" i
                 where i.id = t.instance_id and i.status = 'COMPLETED' and i.completed_at < ${cutoff}::timestamptz
                   and not exists (select 1 from (${heldTargetsSql('instanceId')}) h where h.id = i.id::text))`;
}

/**
 * Outbox rows published before the cutoff. Pending rows (not yet sent) and Dead rows are kept, and so
 * is a row an open approval names (a requeue waiting for a second operator, ADR 0104): the approval
 * is decided against the row, not against nothing.
 */
export function prunableOutboxWhere(cutoff: Date): Prisma.Sql {
  return Prisma.sql`
        o.status = 'Published' and o.published_at < ${cutoff}::timestamptz
    and not exists (select 1 from (${heldTargetsSql('outboxId')}) h where h.id = o.id::text)`;
}

/**
 * Inbox records received before the cutoff, except those of an instance that is not finished (ACTIVE
 * or QUARANTINED): while it is open, a redelivery of one of its old messages must still be known as
 * a duplicate. For a finished instance, or a consumer with no instance, the cutoff is the window in
 * which a redelivery is recognised.
 */
export function prunableInboxWhere(cutoff: Date): Prisma.Sql {
  return Prisma.sql`
        m.received_at < ${cutoff}::timestamptz
    and not exists (select 1 from "sagaflow"."saga_instances" i
                     where i.id = m.instance_id and i.status <> 'COMPLETED')`;
}

/**
 * The rows of worker pools (ADR 0010) gone before the cutoff: stopped then, or silent since. A row a
 * Running step or compensation still names as its `claimed_by` is kept whatever its age: it is what
 * says at once that the step's owner is gone (without it the step would be judged by its claim's age).
 * A pool that was only paused and beats again writes its row anew.
 */
export function prunableWorkersWhere(cutoff: Date): Prisma.Sql {
  return Prisma.sql`
        coalesce(w.stopped_at, w.heartbeat_at) < ${cutoff}::timestamptz
    and not exists (select 1 from "sagaflow"."action_runs" s where s.status = 'Running' and s.claimed_by = w.id)
    and not exists (select 1 from "sagaflow"."compensation_runs" s where s.status = 'Running' and s.claimed_by = w.id)`;
}
