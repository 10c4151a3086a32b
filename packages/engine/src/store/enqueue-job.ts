import type { Db } from './types.ts';

export type JobKind = 'wake-run';

/** A wake for a run, due at `availableAt` (now when omitted). Duplicates are harmless: replay is idempotent. */
export async function enqueueJob(
  db: Db,
  job: { kind: JobKind; runId: string; rowId?: string; availableAt: Date },
): Promise<void> {
  await db.job.create({
    data: { kind: job.kind, run_id: job.runId, row_id: job.rowId ?? null, available_at: job.availableAt },
  });
}
