import type { Db } from '../types.ts';
import type { DbRepairApproval } from './find-approval.ts';

/**
 * Reads an approval and locks its row until the transaction ends. Two approvers deciding one
 * approval at once serialise here: the second waits for the first to commit, then reads the status
 * the first left (no longer pending) and decides nothing.
 */
export async function lockApproval(db: Db, id: string): Promise<DbRepairApproval | null> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    select id::text as id from "sagaflow"."repair_approvals" where id = ${id}::uuid for update`;
  return rows.length === 0 ? null : db.repairApproval.findUnique({ where: { id } });
}
