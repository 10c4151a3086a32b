import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { PgCluster } from '@sagaflow/test-postgres';

const pgCtlPath = '/usr/lib/postgresql/15/bin/pg_ctl';

/** The settings the durable mode starts the server with: every commit is flushed to disk before it returns. */
export const durableSettings = ['fsync=on', 'synchronous_commit=on', 'full_page_writes=on', 'max_connections=200'];

/**
 * Runs `work` with the same cluster (same data directory, port and databases) restarted with
 * durable commits, then restarts it the way test-postgres runs it (fsync, synchronous_commit and
 * full_page_writes off). test-postgres puts those three on the postmaster's command line, which
 * `ALTER SYSTEM` cannot override, so the bench stops the server with {@link PgCluster.pause} and
 * starts it itself with pg_ctl and the same socket, log and port; {@link PgCluster.resume} restores
 * the test settings afterwards, so `cluster.stop()` and its exit hook keep owning the cluster.
 */
export async function withDurableServer<T>(cluster: PgCluster, work: () => Promise<T>): Promise<T> {
  const clusterDir = dirname(cluster.dataDir);
  const options = [
    `-p ${cluster.port}`,
    `-k '${join(clusterDir, 'sock')}'`,
    `-h ${cluster.host}`,
    ...durableSettings.map((s) => `-c ${s}`),
  ].join(' ');
  await cluster.pause();
  try {
    await pgCtl(
      ['start', '-w', '-D', cluster.dataDir, '-l', join(cluster.dataDir, 'server.log'), '-o', options],
      clusterDir,
    );
    try {
      return await work();
    } finally {
      await pgCtl(['stop', '-m', 'fast', '-w', '-D', cluster.dataDir], clusterDir);
    }
  } finally {
    await cluster.resume();
  }
}

/** pg_ctl as `postgres` when this process is root (PostgreSQL refuses to run as root), as test-postgres does. */
async function pgCtl(args: string[], cwd: string): Promise<void> {
  const asRoot = process.getuid?.() === 0;
  const [command, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', pgCtlPath, ...args]] : [pgCtlPath, args];
  try {
    await promisify(execFile)(command, argv, { cwd, encoding: 'utf8' });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(
      `\`${[command, ...argv].join(' ')}\` failed: ${stderr.trim() || String(error)}. ` +
        `The server log is ${join(cwd, 'data', 'server.log')}.`,
      { cause: error },
    );
  }
}
