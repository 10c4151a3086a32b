import type { Db } from '../types.ts';
import { statusIn } from '../keyed-status.ts';

/**
 * Sends a Dead row again: Pending, its attempts counted from 0, due at `now` (`available_at` is also
 * the claim window, so nothing of an earlier claim is left). `last_error` stays: it is why the row
 * died. Conditional on Dead, under the row lock the repair already holds; false = it was not Dead.
 */
export async function requeueOutboxRow(db: Db, args: { id: string; now: Date }): Promise<boolean> {
  const updated = await db.$executeRaw`
    update "sagaflow"."outbox"
       set status = 'Pending', attempts = 0, available_at = ${args.now}::timestamptz, published_at = null
     where id = ${args.id}::uuid and ${statusIn('status', ['Dead'])}`;
  return updated === 1;
}
