import type { Db } from './types.ts';
import { statusIn } from './keyed-status.ts';

/**
 * An expired run's actions that hold a claim (Running) are marked Expired too, so a worker that
 * died or hangs mid-step cannot keep the run from its rollback; a late outcome is then fenced off
 * by the status, as for the step sweep. Steps not yet claimed are interrupted by the delivery.
 */
export async function expireRunningSteps(
  db: Db,
  args: { runId: string; now: Date },
): Promise<{ id: string; sequence: number; name: string }[]> {
  return db.$queryRaw`
    update "sagaflow"."action_runs"
       set status = 'Expired', reclaim_stale_at = null, updated_at = ${args.now}::timestamptz,
           finished_at = ${args.now}::timestamptz,
           error = jsonb_build_object('name', 'RunExpired', 'message', 'the run''s business deadline passed while this step was running')
     where run_id = ${args.runId}::uuid and kind = 'action' and ${statusIn('status', ['Running'])}
    returning id::text as id, sequence, name`;
}
