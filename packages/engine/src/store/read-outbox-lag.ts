import type { Db } from './types.ts';

/** Pending and Dead counts and the oldest Pending row's creation time, from one scan of those rows. */
export async function readOutboxLag(db: Db): Promise<{ pending: number; dead: number; oldestPendingAt: Date | null }> {
  const rows = await db.$queryRaw<{ pending: number; dead: number; oldest: Date | null }[]>`
    select count(*) filter (where status = 'Pending')::int as pending,
           count(*) filter (where status = 'Dead')::int as dead,
           min(created_at) filter (where status = 'Pending') as oldest
      from "sagaflow"."outbox"
     where status in ('Pending', 'Dead')`;
  const row = rows[0];
  return { pending: row?.pending ?? 0, dead: row?.dead ?? 0, oldestPendingAt: row?.oldest ?? null };
}
