import { openRunStatusesSql } from './step-table.ts';
import type { Json } from '../definitions/define-action.ts';
import type { Db } from './types.ts';

export type FinalRunStatus =
  'Completed' | 'Failed' | 'Compensated' | 'Expired' | 'Cancelled' | 'Terminated' | 'TimedOut';

/**
 * Settles a run once: compare-and-swap from an open status. Returns the run's parent link when this
 * call settled it (so the caller can settle the parent's waiting step in the same transaction), or
 * null when the run was already finished.
 */
export async function finishRun(
  db: Db,
  args: { id: string; status: FinalRunStatus; output?: Json; error?: Json; now: Date },
): Promise<{ flowName: string; parentRunId: string | null; parentSequence: number | null } | null> {
  const rows = await db.$queryRaw<
    { flow_name: string; parent_run_id: string | null; parent_sequence: number | null }[]
  >`
    update "sagaflow"."flow_runs"
       set status = ${args.status},
           output = ${args.output === undefined ? null : JSON.stringify(args.output)}::jsonb,
           error = ${args.error === undefined ? null : JSON.stringify(args.error)}::jsonb,
           waiting_for = null, stuck_reason = null,
           finished_at = ${args.now}::timestamptz, updated_at = ${args.now}::timestamptz, version = version + 1
     where id = ${args.id}::uuid and status in ${openRunStatusesSql}
    returning flow_name, parent_run_id::text as parent_run_id, parent_sequence`;
  const r = rows[0];
  return r ? { flowName: r.flow_name, parentRunId: r.parent_run_id, parentSequence: r.parent_sequence } : null;
}
