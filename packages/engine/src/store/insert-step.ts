import type { Json } from '../definitions/define-action.ts';
import type { DbActionRun } from './list-action-runs.ts';
import type { RawDb } from '../db/raw-db.ts';

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
 * One statement on the hot path (INSERT … ON CONFLICT DO NOTHING RETURNING); the row is read only
 * when another replay wrote it first. The JSON goes in as text the engine serialized: Prisma's Json
 * input rounds a double to 16 significant digits, and a recorded ctx.random() must come back exact.
 */
export async function insertStep(db: RawDb, s: NewStep) {
  const [created] = await db.$queryRaw<DbActionRun[]>`
    insert into "sagaflow"."action_runs"
      (run_id, sequence, kind, name, input, status, output, max_attempts, parallel_block,
       reclaim_stale_after_seconds, expires_at, wake_at, finished_at)
    values (${s.runId}::uuid, ${s.sequence}::int, ${s.kind}, ${s.name}, ${JSON.stringify(s.input)}::jsonb,
       ${s.status ?? 'Pending'}, ${s.output === undefined ? null : JSON.stringify(s.output)}::jsonb,
       ${s.maxAttempts ?? 1}::int, ${s.parallelBlock ?? null}::int, ${s.reclaimAfterSeconds ?? null}::int,
       ${s.expiresAt ?? null}::timestamptz, ${s.wakeAt ?? null}::timestamptz,
       ${s.status === 'Completed' ? new Date() : null}::timestamptz)
    on conflict (run_id, sequence) do nothing
    returning *`;
  if (created) return Object.assign(created, { inserted: true });
  return Object.assign(await findStepAt(db, s), { inserted: false });
}

/** The step another replay scheduled at `sequence` first (read as insertStep reads its own). */
export async function findStepAt(db: RawDb, s: Pick<NewStep, 'runId' | 'sequence'>): Promise<DbActionRun> {
  const [row] = await db.$queryRaw<DbActionRun[]>`
    select * from "sagaflow"."action_runs" where run_id = ${s.runId}::uuid and sequence = ${s.sequence}::int`;
  if (!row) throw new Error(`step ${s.sequence} of run ${s.runId} was neither inserted nor found`);
  return row;
}

/** What a statement that inserts a step already claimed reads back of it: only what the server chose. */
export interface ClaimedStepReadBack {
  id: string;
  available_at: Date;
  created_at: Date;
}

/**
 * The row of `step` as a statement that inserts it already claimed writes it (ADR 0042: Running at
 * attempt 1, claimed by `workerId` at `claimedAt`, its reclaim deadline from its window), built from
 * what was sent (its run's id from the statement's item) and the few columns the server chose (its id, and `available_at` and `created_at`,
 * both the transaction's `now()`), so the statement returns three columns, not the row's 22 (ADR 0095).
 * Dates come back as they were sent (raw-values.ts), so each is the one sent. `input` is the code's
 * input, which a claimed step runs with (ADR 0048); jsonb may order its keys otherwise.
 */
export function claimedStepRow(
  step: NewStep,
  claim: { runId: string; workerId: string; claimedAt: Date },
  read: ClaimedStepReadBack,
): DbActionRun {
  const { workerId, claimedAt } = claim;
  const reclaim = step.reclaimAfterSeconds ?? null;
  return {
    id: read.id,
    run_id: claim.runId,
    sequence: step.sequence,
    kind: step.kind,
    name: step.name,
    status: 'Running',
    input: step.input,
    output: null,
    error: null,
    attempts: 1,
    max_attempts: step.maxAttempts ?? 1,
    parallel_block: step.parallelBlock ?? null,
    wake_at: null,
    available_at: read.available_at,
    reclaim_stale_after_seconds: reclaim,
    reclaim_stale_at: reclaim === null ? null : new Date(claimedAt.getTime() + reclaim * 1_000),
    expires_at: step.expiresAt ?? null,
    claimed_by: workerId,
    created_at: read.created_at,
    updated_at: claimedAt,
    started_at: claimedAt,
    finished_at: null,
  };
}
