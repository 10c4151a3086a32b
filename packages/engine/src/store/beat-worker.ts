import type { RawDb } from '../db/raw-db.ts';

/**
 * A worker pool's heartbeat: its row in `workers`, stamped with the database clock (never the
 * host's), created on the first beat. A stopped worker that beats again is alive again.
 */
export async function beatWorker(db: RawDb, args: { workerId: string }): Promise<void> {
  await db.$executeRaw`
    insert into "sagaflow"."workers" (id, started_at, heartbeat_at)
    values (${args.workerId}, now(), now())
    on conflict (id) do update set heartbeat_at = now(), stopped_at = null`;
}
