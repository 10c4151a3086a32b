import type { Db } from '../types.ts';
import type { DbRepairApproval } from './find-approval.ts';

/**
 * Bulk approvals claimed for applying (pending → applying) before `claimedBefore` and never
 * settled: whoever approved them stopped part-way (a crash, a restart). Oldest claim first, through
 * the (status, created_at, id) index: `applying` rows are few.
 */
export async function findInterruptedBulks(db: Db, claimedBefore: Date, limit: number): Promise<DbRepairApproval[]> {
  return db.repairApproval.findMany({
    where: { status: 'applying', bulk: true, decided_at: { lt: claimedBefore } },
    orderBy: [{ decided_at: 'asc' }, { id: 'asc' }],
    take: limit,
  });
}
