import type { Db } from '../types.ts';
import type { DbRepairApproval } from './find-approval.ts';

/**
 * Bulk approvals claimed for applying (pending → applying) before `claimedBefore` and never
 * settled: whoever approved them stopped part-way (a crash, a restart). Also, whatever its claim's
 * age, a bulk that a replica stopping gracefully left part-applied (`left_at`, ADR 0121). Oldest
 * claim first, through the (status, created_at, id) index: `applying` rows are few.
 */
export async function findInterruptedBulks(db: Db, claimedBefore: Date, limit: number): Promise<DbRepairApproval[]> {
  return db.repairApproval.findMany({
    where: {
      status: 'applying',
      bulk: true,
      OR: [{ decided_at: { lt: claimedBefore } }, { left_at: { not: null } }],
    },
    orderBy: [{ decided_at: 'asc' }, { id: 'asc' }],
    take: limit,
  });
}
