import type { RawDb } from '../db/raw-db.ts';
import { openRunByKey } from './keyed-status.ts';

/** Records a cancellation request once on an open run; returns whether this call recorded it. */
export async function requestCancel(
  db: RawDb,
  args: { runId: string; reason: string; deadline: Date; now: Date },
): Promise<boolean> {
  const n = await db.$executeRaw`
    update "sagaflow"."flow_runs"
       set cancel_requested_at = ${args.now}::timestamptz, cancel_reason = ${args.reason},
           cancel_deadline_at = ${args.deadline}::timestamptz, updated_at = ${args.now}::timestamptz, version = version + 1
     where id = ${args.runId}::uuid and cancel_requested_at is null
       and ${openRunByKey('status')}`;
  return n === 1;
}
