import type { Json } from '../definitions/define-action.ts';
import type { Db } from './types.ts';

export interface NewStep {
  runId: string;
  sequence: number;
  kind: 'action' | 'value' | 'signal' | 'timer' | 'child' | 'cancel';
  name: string;
  input: Json;
  status?: 'Pending' | 'Waiting' | 'Completed';
  output?: Json;
  maxAttempts?: number;
  parallelBlock?: number | null;
  reclaimAfterSeconds?: number | null;
  expiresAt?: Date | null;
  wakeAt?: Date | null;
}

/**
 * Schedules a step. Idempotent on (run_id, sequence): of two replays scheduling the same step, the
 * first insert wins and both go on with the same row. Returns that row, and whether this call wrote it.
 */
export async function insertStep(db: Db, s: NewStep) {
  const inserted = await db.$executeRaw`
    insert into "sagaflow"."action_runs"
      (run_id, sequence, kind, name, input, status, output, max_attempts, parallel_block,
       reclaim_stale_after_seconds, expires_at, wake_at, finished_at)
    values (${s.runId}::uuid, ${s.sequence}::int, ${s.kind}, ${s.name}, ${JSON.stringify(s.input)}::jsonb,
       ${s.status ?? 'Pending'}, ${s.output === undefined ? null : JSON.stringify(s.output)}::jsonb,
       ${s.maxAttempts ?? 1}::int, ${s.parallelBlock ?? null}::int, ${s.reclaimAfterSeconds ?? null}::int,
       ${s.expiresAt ?? null}::timestamptz, ${s.wakeAt ?? null}::timestamptz,
       ${s.status === 'Completed' ? new Date() : null}::timestamptz)
    on conflict (run_id, sequence) do nothing`;
  const row = await db.actionRun.findUniqueOrThrow({
    where: { run_id_sequence: { run_id: s.runId, sequence: s.sequence } },
  });
  return Object.assign(row, { inserted: inserted === 1 });
}
