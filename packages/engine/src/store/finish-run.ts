import { Prisma } from '../generated/prisma/client.ts';
import type { Json } from '../definitions/define-action.ts';
import type { RawDb } from '../db/raw-db.ts';
import { openRunByKey } from './keyed-status.ts';

export type FinalRunStatus =
  'Completed' | 'Failed' | 'Compensated' | 'Expired' | 'Cancelled' | 'Terminated' | 'TimedOut';

/**
 * Settles a run once: compare-and-swap from an open status. A run the monitor expired ends Expired
 * whatever the replay that finishes it concluded (it may have loaded the run before the expiry):
 * the row decides, not the caller's view. Terminate and the run timeout keep their own status.
 * Returns the status written and the run's parent link when this call settled it (so the caller
 * can settle the parent's waiting step in the same transaction), or null when it was already finished.
 * The row is locked FOR UPDATE first: that waits for every transaction holding it FOR KEY SHARE
 * (claims, outcomes, signals, replay writes; see lockOpenRun) and makes later ones see it finished,
 * so nothing of the run commits after its terminal event. The events that follow it (a stuck
 * episode's `run.unstuck`, the terminal event) are `appendRunEnd`'s. Call it inside a transaction.
 */
export async function finishRun(
  db: RawDb,
  args: { id: string; status: FinalRunStatus; output?: Json; error?: Json; now: Date },
): Promise<{
  status: FinalRunStatus;
  flowName: string;
  parentRunId: string | null;
  parentSequence: number | null;
} | null> {
  const rows = await db.$queryRaw<
    { status: FinalRunStatus; flow_name: string; parent_run_id: string | null; parent_sequence: number | null }[]
  >`
    with locked as (
      select id from "sagaflow"."flow_runs" where id = ${args.id}::uuid and ${openRunByKey('status')} for update)
    update "sagaflow"."flow_runs"
       set ${finishedRunSet(args)}
     where id = (select id from locked) and ${openRunByKey('status')}
    returning status, flow_name, parent_run_id::text as parent_run_id, parent_sequence`;
  const r = rows[0];
  return r
    ? { status: r.status, flowName: r.flow_name, parentRunId: r.parent_run_id, parentSequence: r.parent_sequence }
    : null;
}

/**
 * The SET list of a run's terminal transition: the status the row decides (an expired run ends
 * Expired), the result, the cleared wait and stuck reason, and the version. Shared with the fused
 * finish (finish-top-run.ts), so a run ends alike either way.
 */
export function finishedRunSet(args: { status: FinalRunStatus; output?: Json; error?: Json; now: Date }): Prisma.Sql {
  return Prisma.sql`status = case when expired_at is not null and ${args.status} not in ('Terminated', 'TimedOut')
                         then 'Expired' else ${args.status} end,
           output = ${args.output === undefined ? null : JSON.stringify(args.output)}::jsonb,
           error = ${args.error === undefined ? null : JSON.stringify(args.error)}::jsonb,
           waiting_for = null, stuck_reason = null,
           finished_at = ${args.now}::timestamptz, updated_at = ${args.now}::timestamptz, version = version + 1`;
}
