import { startCluster, type PgCluster } from '@sagaflow/test-postgres';
import { progress } from './progress.ts';
import { withPgClient } from './with-pg-client.ts';

/** Whether per-statement counts and times can be read for this run, and if not, why. */
export type StatementTracking = { enabled: true } | { enabled: false; reason: string };

export interface BenchCluster {
  readonly cluster: PgCluster;
  readonly statements: StatementTracking;
}

/**
 * Starts a throwaway PostgreSQL 15 cluster and loads pg_stat_statements into it. test-postgres takes
 * no extra server options, so the library is set with ALTER SYSTEM (postgresql.auto.conf) and the
 * cluster restarted once; its own command-line settings (fsync, synchronous_commit, ...) still win.
 * The caller owns the cluster from the moment this returns, and must stop it.
 */
export async function startBenchCluster(): Promise<BenchCluster> {
  const cluster = await startCluster({ log: (line) => progress(`test-postgres: ${line}`) });
  try {
    await withPgClient(cluster.adminUrl, async (c) => {
      await c.query(`alter system set shared_preload_libraries = 'pg_stat_statements'`);
      // pg_stat_wal then times each WAL flush: what one durable commit waits for the disk, per phase.
      await c.query('alter system set track_wal_io_timing = on');
    });
    await cluster.restart();
    await withPgClient(cluster.adminUrl, async (c) => {
      await c.query('create extension if not exists pg_stat_statements');
      await c.query('select pg_stat_statements_reset()');
    });
    return { cluster, statements: { enabled: true } };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    progress(`pg_stat_statements unavailable (${reason}); statements per step will not be reported`);
    try {
      // A failed restart can leave the server down; a cluster without the library is still usable.
      await withPgClient(cluster.adminUrl, (c) => c.query('select 1'));
    } catch (cause) {
      await cluster.stop();
      throw new Error(`the bench cluster did not come back after enabling pg_stat_statements: ${reason}`, { cause });
    }
    return { cluster, statements: { enabled: false, reason } };
  }
}
