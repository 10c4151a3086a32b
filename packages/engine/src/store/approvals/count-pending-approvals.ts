import type { Db } from '../types.ts';

/** Approvals still waiting for a second operator at `now` (pending and not past their expiry). */
export async function countPendingApprovals(db: Db, now: Date): Promise<number> {
  const rows = await db.$queryRaw<{ count: number }[]>`
    select count(*)::int as count from "sagaflow"."repair_approvals"
     where status = 'pending' and expires_at > ${now}::timestamptz`;
  return rows[0]?.count ?? 0;
}
