import type { Db } from '../types.ts';

/**
 * Holds a lock on one repair idempotency key until the transaction ends. A key lives in two tables,
 * a gated draft's `repair_approvals` and a decided command's `repair_commands`, each unique on its
 * own; a submit that drafts and one that audits a refusal of the same key take this lock before they
 * look in the other table and write, so one key ends as one draft or one refusal, never both
 * (review 43).
 */
export async function lockRepairKey(tx: Db, key: string): Promise<void> {
  await tx.$queryRaw`select pg_advisory_xact_lock(hashtextextended(${`sagaflow.repair_key:${key}`}::text, 0))::text as locked`;
}
