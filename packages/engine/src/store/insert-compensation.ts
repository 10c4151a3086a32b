import type { Json } from '../definitions/define-action.ts';
import type { RawDb } from '../db/raw-db.ts';
import type { DbCompensationRun } from './list-compensation-runs.ts';

/**
 * Schedules one compensation of a rollback level at its position (ordinal) in the level; idempotent
 * on (run, level, ordinal). Returns the row and whether this call wrote it.
 */
export async function insertCompensation(
  db: RawDb,
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
  const [row] = await db.$queryRaw<DbCompensationRun[]>`
    select * from "sagaflow"."compensation_runs"
     where run_id = ${c.runId}::uuid and rollback_level = ${c.level}::int and ordinal = ${c.ordinal}::int`;
  if (!row) throw new Error(`compensation ${c.level}.${c.ordinal} of run ${c.runId} was neither inserted nor found`);
  return Object.assign(row, { inserted: inserted === 1 });
}
