import type { RawDb } from '../db/raw-db.ts';
import { statusIn } from './keyed-status.ts';

/**
 * Cancels an action step that is not running (waiting for its first try or for a retry), compare-
 * and-swap: a step a worker has claimed in the meantime is left to finish. Returns whether it did.
 */
export async function cancelWaitingStep(db: RawDb, args: { id: string; now: Date }): Promise<boolean> {
  const n = await db.$executeRaw`
    update "sagaflow"."action_runs"
       set status = 'Cancelled', updated_at = ${args.now}::timestamptz, finished_at = ${args.now}::timestamptz
     where id = ${args.id}::uuid and ${statusIn('status', ['Pending', 'Failed'])}`;
  return n === 1;
}
