import { Prisma } from '../generated/prisma/client.ts';
import type { RawDb } from '../db/raw-db.ts';
import { openRunByKey } from './keyed-status.ts';

/**
 * Locks an open run's row FOR KEY SHARE until the caller's transaction ends, and says whether the
 * run is open. A run's terminal transition ({@link finishRun}) locks the same row FOR UPDATE, so the
 * two are serialized: either this transaction commits first (everything it writes lands before the
 * terminal event), or it waits for the terminal transition and sees the run finished. A plain
 * `exists (... status in open)` is not enough under READ COMMITTED: it reads a snapshot, and a
 * terminate committing right after it would be followed by this transaction's writes.
 * FOR KEY SHARE, not FOR SHARE: the run's ordinary updates (park, mark active, cancel request)
 * take FOR NO KEY UPDATE, which it does not block. `strength: 'update'` is for a transaction that is
 * going to finish the run: taking FOR UPDATE first thing, instead of upgrading a FOR KEY SHARE
 * later, keeps two replays that both try to finish the run from deadlocking.
 */
export async function lockOpenRun(
  db: RawDb,
  runId: string,
  strength: 'key share' | 'no key update' | 'update' = 'key share',
): Promise<boolean> {
  return (await lockOpenRunEpoch(db, runId, strength)) !== null;
}

/**
 * {@link lockOpenRun}, saying the run's history epoch (ADR 0085) as the lock found it, or null when
 * the run is not open.
 */
export async function lockOpenRunEpoch(
  db: RawDb,
  runId: string,
  strength: 'key share' | 'no key update' | 'update' = 'key share',
): Promise<number | null> {
  const rows = await db.$queryRaw<{ epoch: number }[]>(Prisma.sql`
    select r.history_epoch as epoch from "sagaflow"."flow_runs" r
     where r.id = ${runId}::uuid and ${openRunByKey('r.status')}
       ${Prisma.raw(`for ${strength}`)}`);
  return rows[0]?.epoch ?? null;
}
