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
