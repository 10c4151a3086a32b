import type { Db } from './types.ts';

/**
 * Parks an open run: Waiting with what it waits for (healthy) or why it cannot move (stuck).
 * Running/Pending/Compensating become Waiting; the reason is replaced either way.
 */
export async function parkRun(
  db: Db,
  args: { runId: string; waitingFor: string | null; stuckReason: string | null; now: Date },
): Promise<void> {
  await db.$executeRaw`
    update "sagaflow"."flow_runs"
       set status = 'Waiting', waiting_for = ${args.waitingFor}, stuck_reason = ${args.stuckReason},
           updated_at = ${args.now}::timestamptz, version = version + 1
     where id = ${args.runId}::uuid and status in ('Pending', 'Running', 'Waiting', 'Compensating')`;
}
