import type { RawDb } from '../db/raw-db.ts';
import { openRunByKey } from './keyed-status.ts';

/**
 * An open run being replayed shows Running (or Compensating), with no wait or stuck reason.
 * Returns whether it was Pending, whether it is open, and the run's version after this write (a
 * replay's later park only lands if nobody else wrote the run since). A replay's own load does the
 * same in its statement (loadRunForReplay); this is for a rollback that starts. Clearing a stuck reason here
 * writes no `run.unstuck`: a replay that starts is no evidence the run can move; the park or finish
 * that ends this replay says whether it could (recordStuckChange).
 */
export async function markRunActive(
  db: RawDb,
  args: { runId: string; status: 'Running' | 'Compensating'; now: Date },
): Promise<{ wasPending: boolean; open: boolean; version: number }> {
  const rows = await db.$queryRaw<{ was: string; version: number }[]>`
    with upd as (
      update "sagaflow"."flow_runs" r
         set status = ${args.status}, waiting_for = null, stuck_reason = null,
             started_at = coalesce(r.started_at, ${args.now}::timestamptz), updated_at = ${args.now}::timestamptz, version = r.version + 1
        from (select id, status as was from "sagaflow"."flow_runs" where id = ${args.runId}::uuid for no key update) prev
       where r.id = prev.id and ${openRunByKey('prev.was')}
      returning r.id, prev.was, r.version)
    select was, version from upd`;
  const row = rows[0];
  return { wasPending: row?.was === 'Pending', open: row !== undefined, version: row?.version ?? -1 };
}
