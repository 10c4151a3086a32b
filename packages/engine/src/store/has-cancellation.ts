import type { RawDb } from '../db/raw-db.ts';

/** Whether a cancellation (or the monitor's expiry, delivered as one) was requested on the run. */
export async function hasCancellation(db: RawDb, runId: string): Promise<boolean> {
  const rows = await db.$queryRaw<{ requested: boolean }[]>`
    select cancel_requested_at is not null as requested from "sagaflow"."flow_runs" where id = ${runId}::uuid`;
  return rows[0]?.requested ?? false;
}
