import type { Db } from '../types.ts';

/**
 * Reads a run's compensation at (rollback level, ordinal) and locks its row until the transaction
 * ends: the compensation's counterpart of lockStepRow, taken after the run row like it, so the
 * claims and outcomes that would change the row wait for the repair and find it as it left it.
 */
export async function lockCompensationRow(db: Db, runId: string, at: { rollbackLevel: number; ordinal: number }) {
  const rows = await db.$queryRaw<{ id: string }[]>`
    select id::text as id from "sagaflow"."compensation_runs"
     where run_id = ${runId}::uuid and rollback_level = ${at.rollbackLevel}::int and ordinal = ${at.ordinal}::int
       for update`;
  const id = rows[0]?.id;
  return id === undefined ? null : db.compensationRun.findUniqueOrThrow({ where: { id } });
}
