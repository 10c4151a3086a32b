import type { Db } from '../types.ts';

/**
 * Marks every pending approval whose expiry has passed as expired (through the (status, expires_at)
 * index). Idempotent; readers call it before they list, so an expired draft never shows as pending.
 */
export async function expireApprovals(db: Db, now: Date): Promise<number> {
  return db.$executeRaw`
    update "sagaflow"."repair_approvals" set status = 'expired', decided_at = expires_at
     where status = 'pending' and expires_at <= ${now}::timestamptz`;
}
