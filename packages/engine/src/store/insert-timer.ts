import type { RawDb } from '../db/raw-db.ts';

/** The timer row of a `ctx.sleep` at `sequence`, written with its Waiting step (Pending until it fires). */
export async function insertTimer(db: RawDb, t: { runId: string; sequence: number; fireAt: Date }): Promise<void> {
  await db.$executeRaw`
    insert into "sagaflow"."timers" (run_id, sequence, fire_at)
    values (${t.runId}::uuid, ${t.sequence}::int, ${t.fireAt}::timestamptz)`;
}
