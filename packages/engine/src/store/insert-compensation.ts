import type { Json } from '../definitions/define-action.ts';
import type { Db } from './types.ts';

/**
 * Schedules one compensation of a rollback level at its position (ordinal) in the level; idempotent
 * on (run, level, ordinal). Returns the row and whether this call wrote it.
 */
export async function insertCompensation(
  db: Db,
  c: {
    runId: string;
    actionSequence: number;
    level: number;
    ordinal: number;
    name: string;
    input: Json;
    maxAttempts: number;
    reclaimAfterSeconds: number | null;
    expiresAt: Date | null;
  },
) {
  const inserted = await db.$executeRaw`
    insert into "sagaflow"."compensation_runs"
      (run_id, action_sequence, rollback_level, ordinal, name, input, max_attempts, reclaim_stale_after_seconds, expires_at)
    values (${c.runId}::uuid, ${c.actionSequence}::int, ${c.level}::int, ${c.ordinal}::int, ${c.name},
            ${JSON.stringify(c.input)}::jsonb, ${c.maxAttempts}::int, ${c.reclaimAfterSeconds}::int, ${c.expiresAt}::timestamptz)
    on conflict (run_id, rollback_level, ordinal) do nothing`;
  const row = await db.compensationRun.findUniqueOrThrow({
    where: { run_id_rollback_level_ordinal: { run_id: c.runId, rollback_level: c.level, ordinal: c.ordinal } },
  });
  return Object.assign(row, { inserted: inserted === 1 });
}
