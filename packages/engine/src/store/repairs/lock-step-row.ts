import type { Db } from '../types.ts';

/**
 * Reads a run's step at `sequence` and locks its row until the transaction ends. A repair takes it
 * after the run row (FOR UPDATE): the claims, outcomes and sweeps that would change the step lock
 * the run row first, so they wait for the repair, and then find the step as it left it.
 */
export async function lockStepRow(db: Db, runId: string, sequence: number) {
  const rows = await db.$queryRaw<{ id: string }[]>`
    select id::text as id from "sagaflow"."action_runs"
     where run_id = ${runId}::uuid and sequence = ${sequence}::int for update`;
  const id = rows[0]?.id;
  return id === undefined ? null : db.actionRun.findUniqueOrThrow({ where: { id } });
}
