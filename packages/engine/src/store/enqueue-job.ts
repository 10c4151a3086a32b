import type { RawDb } from '../db/raw-db.ts';

export type JobKind = 'wake-run';

/** A wake for a run, due at `availableAt` (now when omitted). Duplicates are harmless: replay is idempotent. */
export async function enqueueJob(
  db: RawDb,
  job: { kind: JobKind; runId: string; rowId?: string; availableAt: Date },
): Promise<void> {
  await db.$executeRaw`
    insert into "sagaflow"."jobs" (kind, run_id, row_id, available_at)
    values (${job.kind}, ${job.runId}::uuid, ${job.rowId ?? null}::uuid, ${job.availableAt}::timestamptz)`;
}

/**
 * A wake for a run due now, unless one already waits for a worker (unclaimed and due): a second would
 * start a second replay that races the first for the reopened row (review 60: a kick and the doctor at
 * once). Call it under the run's row lock (no key update), so two such calls do not both insert.
 */
export async function enqueueWakeOnce(db: RawDb, args: { runId: string; now: Date }): Promise<void> {
  await db.$executeRaw`
    insert into "sagaflow"."jobs" (kind, run_id, available_at)
    select 'wake-run', ${args.runId}::uuid, ${args.now}::timestamptz
     where not exists (select 1 from "sagaflow"."jobs" j
                        where j.run_id = ${args.runId}::uuid and j.kind = 'wake-run' and j.locked_by is null
                          and j.available_at <= ${args.now}::timestamptz)`;
}
