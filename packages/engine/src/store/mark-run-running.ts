import type { Db } from './types.ts';

/** Pending → Running on first pickup; returns whether this call moved it. */
export async function markRunRunning(db: Db, id: string): Promise<boolean> {
  const res = await db.flowRun.updateMany({
    where: { id, status: 'Pending' },
    data: { status: 'Running', started_at: new Date(), updated_at: new Date(), version: { increment: 1 } },
  });
  return res.count === 1;
}
