import type { Db } from '../types.ts';

/**
 * Sets an open run's business deadline to now, unless it has already passed: an operator's "expire
 * now" then goes through the monitor's own expiry (markRunExpired), which only expires overdue runs.
 * The run keeps its original deadline in the expiry's history event.
 */
export async function bringDeadlineForward(db: Db, args: { runId: string; now: Date }): Promise<void> {
  await db.$executeRaw`
    update "sagaflow"."flow_runs" set expires_at = ${args.now}::timestamptz
     where id = ${args.runId}::uuid and (expires_at is null or expires_at > ${args.now}::timestamptz)`;
}
