import type { RawDb } from '../db/raw-db.ts';
import { statusIn } from './keyed-status.ts';

/** Marks the timer at `sequence` Fired, in the transaction that completes its step; a timer already settled is left. */
export async function fireTimer(db: RawDb, t: { runId: string; sequence: number; now: Date }): Promise<void> {
  await db.$executeRaw`
    update "sagaflow"."timers" set status = 'Fired', fired_at = ${t.now}::timestamptz
     where run_id = ${t.runId}::uuid and sequence = ${t.sequence}::int and ${statusIn('status', ['Pending'])}`;
}
