import { openRunByKey, statusIs } from './keyed-status.ts';
import { recordStuckChange } from './record-stuck-change.ts';
import type { Db } from './types.ts';

/**
 * The monitor re-judging a stuck reason it gave (ADR 0124): sets the run's reason from `from` to `to`
 * (null clears it) only while the run is open and still has `from`, so a replay, a park or another
 * marker that wrote the run meanwhile wins. Setting a reason on a run that has none needs it parked
 * (`Waiting`): a replay in progress says for itself what it waits for. The version is left as it is:
 * this reason is read from outside the run and a park that erases it is corrected by the next pass.
 * `run.stuck` / `run.unstuck` go in its history in the same transaction (recordStuckChange): call it
 * inside a transaction.
 */
export async function changeStuckReason(
  db: Db,
  args: { runId: string; from: string | null; to: string | null; now: Date },
): Promise<boolean> {
  if (args.from === args.to) return false;
  const parked = args.from === null ? statusIs('status', 'Waiting') : openRunByKey('status');
  const n = await db.$executeRaw`
    update "sagaflow"."flow_runs"
       set stuck_reason = ${args.to}, updated_at = ${args.now}::timestamptz
     where id = ${args.runId}::uuid and ${parked} and stuck_reason is not distinct from ${args.from}::text`;
  if (n !== 1) return false;
  await recordStuckChange(db, { runId: args.runId, reason: args.to, by: 'monitor' });
  return true;
}
