import type { Db } from '../types.ts';

/** The stored approval policy row, or null when an admin never set one (the default applies). */
export async function readApprovalPolicy(db: Db) {
  return db.repairApprovalPolicy.findUnique({ where: { id: 1 } });
}
export type DbApprovalPolicy = NonNullable<Awaited<ReturnType<typeof readApprovalPolicy>>>;
