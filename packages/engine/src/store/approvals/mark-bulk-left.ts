import type { Json } from '../../definitions/define-action.ts';
import type { Db } from '../types.ts';

/**
 * A replica that stopped gracefully ended an approved bulk between two items (ADR 0121): the bulk
 * stays `applying`, marked so that any replica's resumer takes it at its next pass rather than once
 * its claim is `approvals.resume_applying_after_seconds` old. Returns whether it was still applying.
 */
export async function markBulkLeft(db: Db, id: string, at: Date, result?: Json): Promise<boolean> {
  // With `result`, what this pass did is kept on the approval (its items, a busy one named as such)
  // until a resumer's pass settles it and writes its own (ADR 0132).
  const changed =
    result === undefined
      ? await db.$executeRaw`
          update "sagaflow"."repair_approvals" set left_at = ${at}::timestamptz
           where id = ${id}::uuid and status = 'applying'`
      : await db.$executeRaw`
          update "sagaflow"."repair_approvals" set left_at = ${at}::timestamptz, result = ${JSON.stringify(result)}::jsonb
           where id = ${id}::uuid and status = 'applying'`;
  return changed === 1;
}

/**
 * A resumer takes a bulk left by a graceful stop: the mark is cleared, so of several resumers one
 * takes it at once (the others wait for its claim to age, as for any claim). Whether this call did.
 */
export async function takeLeftBulk(db: Db, id: string): Promise<boolean> {
  const changed = await db.$executeRaw`
    update "sagaflow"."repair_approvals" set left_at = null
     where id = ${id}::uuid and status = 'applying' and left_at is not null`;
  return changed === 1;
}
