import type { Db } from './types.ts';
import { statusIn } from './keyed-status.ts';

/**
 * Records a failed publish: back to Pending, due again at `retryAt`, or Dead once the row has used
 * `maxAttempts` (Dead rows stay, visible, never deleted). Conditional on the attempt the claim
 * produced and on the window it wrote (`claimedUntil`), so a publisher whose claim window lapsed
 * cannot undo a newer claim's outcome, even one that counts the same attempt again (after a
 * hand-back or a requeue, ADR 0104's addendum).
 * Returns the status written, or null when the claim was lost.
 */
export async function recordOutboxFailure(
  db: Db,
  args: { id: string; attempts: number; claimedUntil: Date; maxAttempts: number; retryAt: Date; error: string },
): Promise<'Pending' | 'Dead' | null> {
  const rows = await db.$queryRaw<{ status: 'Pending' | 'Dead' }[]>`
    update "sagaflow"."outbox"
       set status = case when attempts >= ${args.maxAttempts}::int then 'Dead' else 'Pending' end,
           available_at = case when attempts >= ${args.maxAttempts}::int then available_at
                               else ${args.retryAt}::timestamptz end,
           last_error = ${args.error}
     where id = ${args.id}::uuid and ${statusIn('status', ['Pending'])} and attempts = ${args.attempts}::int
       and available_at = ${args.claimedUntil}::timestamptz
    returning status`;
  return rows[0]?.status ?? null;
}
