import type { Json } from '../definitions/define-action.ts';
import type { Db } from './types.ts';

/** Schedules one compensation of a rollback level; idempotent on (run, forward step, level). */
export async function insertCompensation(
  db: Db,
  c: {
    runId: string;
    actionSequence: number;
    level: number;
    name: string;
    input: Json;
    maxAttempts: number;
    reclaimAfterSeconds: number | null;
  },
) {
  await db.$executeRaw`
    insert into "sagaflow"."compensation_runs" (run_id, action_sequence, rollback_level, name, input, max_attempts, reclaim_stale_after_seconds)
    values (${c.runId}::uuid, ${c.actionSequence}::int, ${c.level}::int, ${c.name}, ${JSON.stringify(c.input)}::jsonb,
            ${c.maxAttempts}::int, ${c.reclaimAfterSeconds}::int)
    on conflict (run_id, action_sequence, rollback_level) do nothing`;
  return db.compensationRun.findUniqueOrThrow({
    where: {
      run_id_action_sequence_rollback_level: {
        run_id: c.runId,
        action_sequence: c.actionSequence,
        rollback_level: c.level,
      },
    },
  });
}
