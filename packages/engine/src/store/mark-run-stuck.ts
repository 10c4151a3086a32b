import { recordStuckChange } from './record-stuck-change.ts';
import type { Db } from './types.ts';
import { openRunByKey } from './keyed-status.ts';

/**
 * Gives an open run a stuck reason found from outside its replay (the monitor), unless it already
 * has one, and writes `run.stuck` to its history in the same transaction (recordStuckChange): call
 * it inside a transaction. Bumps the version, like a park: a healthy park by an older replay does
 * not erase it. The update locks the run row, so it is serialized with the terminal transition and
 * never lands on a finished run.
 */
export async function markRunStuck(db: Db, args: { runId: string; stuckReason: string; now: Date }): Promise<boolean> {
  const n = await db.$executeRaw`
    update "sagaflow"."flow_runs"
       set stuck_reason = ${args.stuckReason}, updated_at = ${args.now}::timestamptz, version = version + 1
     where id = ${args.runId}::uuid and ${openRunByKey('status')} and stuck_reason is null`;
  if (n !== 1) return false;
  await recordStuckChange(db, { runId: args.runId, reason: args.stuckReason, by: 'monitor' });
  return true;
}
