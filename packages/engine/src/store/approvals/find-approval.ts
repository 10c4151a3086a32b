import type { Db } from '../types.ts';

/** An approval by id. */
export async function findApproval(db: Db, id: string) {
  return db.repairApproval.findUnique({ where: { id } });
}
export type DbRepairApproval = NonNullable<Awaited<ReturnType<typeof findApproval>>>;

/** The approval of an idempotency key, if one was drafted. */
export async function findApprovalByKey(db: Db, idempotencyKey: string): Promise<DbRepairApproval | null> {
  return db.repairApproval.findUnique({ where: { idempotency_key: idempotencyKey } });
}
