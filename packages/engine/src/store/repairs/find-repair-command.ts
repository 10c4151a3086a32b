import type { Db } from '../types.ts';

/** The audit row of a repair's idempotency key, if one was decided. */
export async function findRepairCommand(db: Db, idempotencyKey: string) {
  return db.repairCommand.findUnique({ where: { idempotency_key: idempotencyKey } });
}
export type DbRepairCommand = NonNullable<Awaited<ReturnType<typeof findRepairCommand>>>;
