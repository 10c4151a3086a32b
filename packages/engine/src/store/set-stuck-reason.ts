import type { Db } from './types.ts';

/** Makes an open run visibly stuck, with the reason an operator reads. */
export async function setStuckReason(db: Db, runId: string, reason: string): Promise<void> {
  await db.flowRun.updateMany({
    where: { id: runId, status: { in: ['Pending', 'Running', 'Waiting', 'Compensating'] } },
    data: { stuck_reason: reason, updated_at: new Date() },
  });
}
