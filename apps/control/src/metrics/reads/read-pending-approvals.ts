import type { SqlReader } from './sql-reader.ts';

/**
 * Repair commands waiting for a second operator at `at` (ADR 0020): pending and not yet expired,
 * through the approvals' (status, expires_at) index.
 */
export async function readPendingApprovals(db: SqlReader, at: Date): Promise<number> {
  const rows = await db.$queryRaw<{ count: number }[]>`
    select count(*)::int as count from "sagaflow"."repair_approvals"
     where status = 'pending' and expires_at > ${at}::timestamptz`;
  return rows[0]?.count ?? 0;
}
