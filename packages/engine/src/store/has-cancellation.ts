import type { Db } from './types.ts';

/** Whether a cancellation (or the monitor's expiry, delivered as one) was requested on the run. */
export async function hasCancellation(db: Db, runId: string): Promise<boolean> {
  const run = await db.flowRun.findUnique({ where: { id: runId }, select: { cancel_requested_at: true } });
  return (run?.cancel_requested_at ?? null) !== null;
}
