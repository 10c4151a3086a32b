import type { Json } from '../definitions/define-action.ts';
import { Prisma } from '../generated/prisma/client.ts';
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

/** A JSON value as Prisma stores it: a JSON `null` is Prisma.JsonNull, not a database NULL. */
const jsonValue = (v: Json) => (v === null ? Prisma.JsonNull : (v as Prisma.InputJsonValue));

/**
 * Schedules a step. Idempotent on (run_id, sequence): of two replays scheduling the same step, the
 * first insert wins and both go on with the same row. Returns that row, and whether this call wrote it.
 * One statement on the hot path (INSERT … ON CONFLICT DO NOTHING RETURNING); the row is read only
 * when another replay wrote it first.
 */
export async function insertStep(db: Db, s: NewStep) {
  const [created] = await db.actionRun.createManyAndReturn({
    skipDuplicates: true,
    data: {
      run_id: s.runId,
      sequence: s.sequence,
      kind: s.kind,
      name: s.name,
      input: jsonValue(s.input),
      status: s.status ?? 'Pending',
      ...(s.output === undefined ? {} : { output: jsonValue(s.output) }),
      max_attempts: s.maxAttempts ?? 1,
      parallel_block: s.parallelBlock ?? null,
      reclaim_stale_after_seconds: s.reclaimAfterSeconds ?? null,
      expires_at: s.expiresAt ?? null,
      wake_at: s.wakeAt ?? null,
      finished_at: s.status === 'Completed' ? new Date() : null,
    },
  });
  if (created) return Object.assign(created, { inserted: true });
  const row = await db.actionRun.findUniqueOrThrow({
    where: { run_id_sequence: { run_id: s.runId, sequence: s.sequence } },
  });
  return Object.assign(row, { inserted: false });
}
