import { Prisma } from '../generated/prisma/client.ts';
import { openRunByKey } from './keyed-status.ts';
import type { RawDb } from '../db/raw-db.ts';

/**
 * Locks an open run's row as {@link lockOpenRun} does, but never waits for it: `held` when another
 * session holds the row (a worker's round for a moment, an operator's psql or a host's open transaction
 * for as long as it likes), `closed` when the run is not open (or not there). The monitor's sweeps pass a
 * held run over until their next pass instead of waiting on it: one held run must not stop the deadlines
 * and the `owner_gone` judgement of every other run (review 58).
 */
export async function tryLockOpenRun(
  db: RawDb,
  runId: string,
  strength: 'key share' | 'no key update' | 'update' = 'key share',
): Promise<'locked' | 'held' | 'closed'> {
  const locked = await db.$queryRaw<{ id: string }[]>(Prisma.sql`
    select r.id from "sagaflow"."flow_runs" r
     where r.id = ${runId}::uuid and ${openRunByKey('r.status')}
       ${Prisma.raw(`for ${strength} skip locked`)}`);
  if (locked.length > 0) return 'locked';
  // Skipped or not open: a plain read never waits on the holder.
  const open = await db.$queryRaw<{ id: string }[]>(Prisma.sql`
    select r.id from "sagaflow"."flow_runs" r where r.id = ${runId}::uuid and ${openRunByKey('r.status')}`);
  return open.length > 0 ? 'held' : 'closed';
}
