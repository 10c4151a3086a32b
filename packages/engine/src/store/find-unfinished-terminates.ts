import { Prisma } from '../generated/prisma/client.ts';
import { inherited } from './inherited-reason.ts';
import { openRunByKey } from './keyed-status.ts';
import type { RawDb } from '../db/raw-db.ts';

/**
 * A closed run under which a terminate left runs open (ADR 0140), and the reason its terminate's batches
 * quote (`parent <it> was terminated: <this>`): its terminate's reason, or, for a run that closed at its
 * window before its batch came, the reason the fence gave it; the end of it for a run under another, as
 * the fence quotes (`inherited`).
 */
export interface UnfinishedTerminate {
  id: string;
  reason: string;
}

/**
 * What a terminate's fence marks (ADR 0125): `parent <uuid> was terminated: …`, the reason the fence gives a
 * descendant it reaches that was not asked to cancel before.
 */
const fencedReason = `^parent [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12} was terminated: `;

/**
 * Where terminates were left unfinished (ADR 0140): the closed parents of open 'propagate' runs whose cleanup
 * window a terminate's fence closed at least `before` ago (`cancel_deadline_at <= before`). The parent is
 * Terminated (its terminate fenced its tree), or it was asked to cancel and closed at its window before its
 * batch came, its child's reason the fence's (review 66's D2). A terminate's batches walked from such a
 * parent end what it left, as they would have. The oldest windows first, at most `limit` parents. Read
 * through the open runs' closed-window index (migration 0036), which holds only the open runs asked to
 * cancel.
 */
export async function findUnfinishedTerminates(
  db: RawDb,
  args: { before: Date; limit: number },
): Promise<UnfinishedTerminate[]> {
  return db.$queryRaw<UnfinishedTerminate[]>(Prisma.sql`
    select p.id::text as id,
           coalesce(case when ${walked} then ${inherited(parentReason)} else ${Prisma.raw(parentReason)} end, '') as reason
      from "sagaflow"."flow_runs" p
      join (select r.parent_run_id, min(case when q.status = 'Terminated' then q.finished_at else r.cancel_deadline_at end) as fenced
              from "sagaflow"."flow_runs" r
              join "sagaflow"."flow_runs" q on q.id = r.parent_run_id
             where r.cancel_deadline_at is not null and r.cancel_deadline_at <= ${args.before}::timestamptz
               and r.status in ('Pending', 'Running', 'Waiting', 'Compensating')
               and r.parent_cancel_policy = 'propagate'
               and not ${openRunByKey('q.status')}
               and ((q.status = 'Terminated' and q.finished_at <= ${args.before}::timestamptz)
                    or (q.cancel_requested_at is not null and r.cancel_reason ~ ${fencedReason}))
             group by r.parent_run_id) c on c.parent_run_id = p.id
     order by c.fenced, p.id
     limit ${args.limit}::int`);
}

/** A parent's own reason: its terminate's (on its error), or the one the fence gave it, for one that closed at its window. */
const parentReason = "case when p.status = 'Terminated' then p.error->>'message' else p.cancel_reason end";

/**
 * Whether the parent was reached by a terminate's walk (its reason the fence's or the batch's: `parent <uuid> was
 * terminated: …`) rather than being the terminate's own root: its children quote the end of its reason, as the
 * fence and the batches quote a reason below the first level; a root's reason is quoted whole.
 */
const walked = Prisma.sql`(${Prisma.raw(parentReason)}) ~ ${fencedReason}`;
