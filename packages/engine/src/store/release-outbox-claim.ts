import type { Db } from './types.ts';
import { statusIn } from './keyed-status.ts';

/**
 * Hands back a claimed row that was never tried (an earlier row of its source failed in the same
 * pass): due again now, and the attempt the claim counted is returned. The earlier row's backoff
 * then holds it back, so per-source order is kept. False = the claim was already lost (conditional on
 * the claim's attempt and window, as a failure is: see recordOutboxFailure).
 */
export async function releaseOutboxClaim(
  db: Db,
  args: { id: string; attempts: number; claimedUntil: Date; now: Date },
): Promise<boolean> {
  const updated = await db.$executeRaw`
    update "sagaflow"."outbox"
       set available_at = ${args.now}::timestamptz, attempts = attempts - 1
     where id = ${args.id}::uuid and ${statusIn('status', ['Pending'])} and attempts = ${args.attempts}::int
       and available_at = ${args.claimedUntil}::timestamptz`;
  return updated === 1;
}
