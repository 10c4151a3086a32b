import pg from 'pg';
import type { Database } from '../../src/db/database.ts';
import { waitFor } from './wait-for.ts';

/** A transaction of the test's own, on a connection of its own, holding rows FOR UPDATE as a terminate or a repair does. */
export interface HeldRows {
  pid: number;
  client: pg.Client;
  /** Takes one more row's lock, in the open transaction. */
  hold: (id: string) => Promise<unknown>;
  /** Ends the transaction and the connection; a second call (or one after the other) does nothing. */
  commit: () => Promise<void>;
  rollback: () => Promise<void>;
}

/** Opens a connection to `url`, begins, and holds `runIds`' rows (FOR UPDATE) until its commit or rollback. */
export function holdRuns(url: string, runIds: string[], deadlockTimeout?: string): Promise<HeldRows> {
  return holdRows(url, 'flow_runs', runIds, deadlockTimeout);
}

/** Opens a connection to `url`, begins, and holds the rows of `table` with these ids FOR UPDATE until its commit or rollback. */
export async function holdRows(
  url: string,
  table: 'flow_runs' | 'saga_instances' | 'outbox',
  ids: string[],
  deadlockTimeout?: string,
): Promise<HeldRows> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  await client.query('begin');
  if (deadlockTimeout !== undefined) await client.query(`set local deadlock_timeout = '${deadlockTimeout}'`);
  const hold = (id: string) => client.query(`select id from sagaflow.${table} where id = $1 for update`, [id]);
  for (const id of ids) await hold(id);
  let ended: Promise<void> | null = null;
  const end = (how: 'commit' | 'rollback') =>
    (ended ??= (async () => {
      try {
        await client.query(how);
      } finally {
        await client.end();
      }
    })());
  return { pid, client, hold, commit: () => end('commit'), rollback: () => end('rollback') };
}

/** The backends of `db`'s database that wait for a lock held by `holder` (progress, not time). */
export async function waitersOn(db: Database, holder: number): Promise<{ pid: number; query: string }[]> {
  return db.prisma.$queryRaw<{ pid: number; query: string }[]>`
    select pid, query from pg_stat_activity
     where datname = current_database() and wait_event_type = 'Lock' and ${holder}::int = any(pg_blocking_pids(pid))`;
}

/** Waits until at least `count` backends wait for a lock `holder` holds; returns them. */
export const waitForWaiters = (db: Database, holder: number, count = 1) =>
  waitFor(`${count} backend(s) to wait on ${holder}`, async () => {
    const waiting = await waitersOn(db, holder);
    return waiting.length >= count ? waiting : undefined;
  });
