import { recordStuckChange } from './record-stuck-change.ts';
import type { Db } from './types.ts';
import { openRunByKey } from './keyed-status.ts';

/**
 * Expires an overdue run once, with a conditional write (still open, still overdue, not expired or
 * cancelled meanwhile). It is delivered like a cancellation: the flow's code gets
 * FlowError('expired') at its live step and may compensate until `cleanupUntil`. A run stuck until
 * now (its rollback could not be planned before) is no longer: `run.unstuck` goes in its history.
 * Call it inside a transaction.
 */
export async function markRunExpired(
  db: Db,
  args: { runId: string; reason: string; cleanupUntil: Date; now: Date },
): Promise<boolean> {
  const n = await db.$executeRaw`
    update "sagaflow"."flow_runs"
       set expired_at = ${args.now}::timestamptz, cancel_requested_at = ${args.now}::timestamptz,
           cancel_reason = ${args.reason}, cancel_deadline_at = ${args.cleanupUntil}::timestamptz,
           expiry_retry_at = null, stuck_reason = null, updated_at = ${args.now}::timestamptz, version = version + 1
     where id = ${args.runId}::uuid and expired_at is null and cancel_requested_at is null
       and expires_at <= ${args.now}::timestamptz and ${openRunByKey('status')}`;
  if (n !== 1) return false;
  await recordStuckChange(db, { runId: args.runId, reason: null, by: 'run.expiry_started' });
  return true;
}
