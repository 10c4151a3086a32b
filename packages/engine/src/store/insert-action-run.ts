import type { Json } from '../definitions/define-action.ts';
import type { Db } from './types.ts';

/** Schedules a step. Idempotent on (run_id, sequence): two replays of one run create one row. */
export async function insertActionRun(
  db: Db,
  row: { runId: string; sequence: number; name: string; input: Json; maxAttempts: number },
): Promise<void> {
  await db.$executeRaw`
    insert into "sagaflow"."action_runs" (run_id, sequence, name, input, max_attempts)
    values (${row.runId}::uuid, ${row.sequence}::int, ${row.name}, ${JSON.stringify(row.input)}::jsonb, ${row.maxAttempts}::int)
    on conflict (run_id, sequence) do nothing`;
}
