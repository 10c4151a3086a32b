import type { RawDb } from '../db/raw-db.ts';

/** A worker pool that stopped says so: the steps it still holds belong to nobody from now on. */
export async function stopWorker(db: RawDb, args: { workerId: string }): Promise<void> {
  await db.$executeRaw`update "sagaflow"."workers" set stopped_at = now() where id = ${args.workerId}`;
}
