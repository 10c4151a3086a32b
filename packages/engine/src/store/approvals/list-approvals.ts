import type { Db } from '../types.ts';
import type { DbRepairApproval } from './find-approval.ts';

export interface ListApprovalsFilter {
  /** Only these statuses; all when absent. */
  statuses?: readonly string[];
  /** Newest first, after this (created_at, id) position. */
  before?: { at: Date; id: string };
  limit: number;
}

/** Approvals newest first, keyset-paged on (created_at, id) through its indexes. */
export async function listApprovals(db: Db, f: ListApprovalsFilter): Promise<DbRepairApproval[]> {
  return db.repairApproval.findMany({
    where: {
      ...(f.statuses ? { status: { in: [...f.statuses] } } : {}),
      ...(f.before
        ? {
            OR: [{ created_at: { lt: f.before.at } }, { created_at: f.before.at, id: { lt: f.before.id } }],
          }
        : {}),
    },
    orderBy: [{ created_at: 'desc' }, { id: 'desc' }],
    take: f.limit,
  });
}
