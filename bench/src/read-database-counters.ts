import { setTimeout as sleep } from 'node:timers/promises';
import { withPgClient } from './with-pg-client.ts';

export interface DatabaseCounters {
  /** pg_stat_database.xact_commit: every committed transaction, read-only ones included. */
  readonly xactCommit: number;
  readonly xactRollback: number;
  /**
   * The cluster's next transaction id. Only transactions that write (or lock rows) are given one, so
   * the difference across a phase counts writing transactions, cluster-wide (autovacuum's too).
   */
  readonly nextXid: number;
  /** pg_stat_wal.wal_sync: the cluster's WAL flushes to disk so far (none while fsync is off). */
  readonly walSyncs: number;
  /** pg_stat_wal.wal_sync_time in ms: 0 unless track_wal_io_timing is on (the bench cluster sets it). */
  readonly walSyncMs: number;
}

/**
 * Reads the commit counters of database `name`. PostgreSQL 15 backends flush these counters lazily
 * (up to ~10 s after going idle) and always when they exit, so read them when nobody is connected:
 * see {@link waitForNoSessions}.
 */
export async function readDatabaseCounters(adminUrl: string, name: string): Promise<DatabaseCounters> {
  return withPgClient(adminUrl, async (c) => {
    const { rows } = await c.query<{
      xact_commit: string;
      xact_rollback: string;
      next_xid: string;
      wal_sync: string;
      wal_sync_time: number;
    }>(
      `select d.xact_commit::text, d.xact_rollback::text, pg_snapshot_xmax(pg_current_snapshot())::text as next_xid,
              w.wal_sync::text, w.wal_sync_time
         from pg_stat_database d cross join pg_stat_wal w where d.datname = $1`,
      [name],
    );
    const row = rows[0];
    if (!row) throw new Error(`database ${name} has no row in pg_stat_database`);
    return {
      xactCommit: Number(row.xact_commit),
      xactRollback: Number(row.xact_rollback),
      nextXid: Number(row.next_xid),
      walSyncs: Number(row.wal_sync),
      walSyncMs: row.wal_sync_time,
    };
  });
}

/** Waits until no session is connected to database `name` (so every backend has flushed its stats). */
export async function waitForNoSessions(adminUrl: string, name: string, timeoutMs = 10_000): Promise<void> {
  await withPgClient(adminUrl, async (c) => {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const { rows } = await c.query<{ n: number }>(
        'select count(*)::int as n from pg_stat_activity where datname = $1',
        [name],
      );
      if ((rows[0]?.n ?? 0) === 0) return;
      if (performance.now() > deadline) throw new Error(`sessions still connected to ${name} after ${timeoutMs} ms`);
      await sleep(20);
    }
  });
}
