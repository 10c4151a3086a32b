import type { Database } from '../../../src/db/database.ts';
import { waitFor } from '../../support/wait-for.ts';

/**
 * Review 21. Waits until at least `count` backends of `db`'s database wait for a lock (progress, not
 * time). A backend queued behind another waiter for the same row waits on that waiter's tuple lock,
 * not on the holder, so `waitForWaiters(holder)` does not see it: this counts every lock waiter.
 */
export const lockWaiters = (db: Database, count: number) =>
  waitFor(`${count} backend(s) to wait for a lock`, async () => {
    const rows = await db.prisma.$queryRaw<{ pid: number; query: string }[]>`
      select pid, query from pg_stat_activity
       where datname = current_database() and wait_event_type = 'Lock'`;
    return rows.length >= count ? rows : undefined;
  });

/** The deadlocks PostgreSQL detected in `db`'s database so far (its statistics may lag a moment). */
export async function deadlocks(db: Database): Promise<number> {
  const rows = await db.prisma.$queryRaw<{ n: number }[]>`
    select deadlocks::int as n from pg_stat_database where datname = current_database()`;
  return rows[0]?.n ?? 0;
}
