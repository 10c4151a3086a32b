import { recordStuckChange } from './record-stuck-change.ts';
import type { RawDb } from '../db/raw-db.ts';
import { openRunByKey } from './keyed-status.ts';

/**
 * Parks an open run: Waiting with what it waits for (healthy) or why it cannot move (stuck); a run
 * mid-rollback stays Compensating, so an operator sees it is undoing, not idle.
 * Conditional on the version the parking replay saw: a replay that was overtaken by another (which
 * wrote the run since) leaves the newer state alone. Returns whether it landed. Becoming stuck, or
 * no longer stuck, is written to the run's history in the same transaction (recordStuckChange): call
 * it inside a transaction.
 */
export async function parkRun(
  db: RawDb,
  args: {
    runId: string;
    waitingFor: string | null;
    stuckReason: string | null;
    expectedVersion: number | null;
    now: Date;
  },
): Promise<boolean> {
  const n = await db.$executeRaw`
    update "sagaflow"."flow_runs"
       set status = case when status = 'Compensating' then 'Compensating' else 'Waiting' end, waiting_for = ${args.waitingFor}, stuck_reason = ${args.stuckReason},
           updated_at = ${args.now}::timestamptz, version = version + 1
     where id = ${args.runId}::uuid and ${openRunByKey('status')}
       and (${args.expectedVersion}::int is null or version = ${args.expectedVersion}::int)`;
  if (n !== 1) return false;
  await recordStuckChange(db, { runId: args.runId, reason: args.stuckReason, by: 'park' });
  return true;
}
