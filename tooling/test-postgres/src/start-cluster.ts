import { chown, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { clusterDirPrefix, clusterLayout } from './cluster-layout.ts';
import type { ClusterLayout } from './cluster-layout.ts';
import { destroyCluster, destroyClusterSync } from './destroy-cluster.ts';
import type { DestroyClusterOptions } from './destroy-cluster.ts';
import { findPgBinaries } from './find-pg-binaries.ts';
import type { PgBinaries } from './find-pg-binaries.ts';
import type { PgCluster, StartClusterOptions } from './pg-cluster.ts';
import { reapStaleClusters } from './reap-stale-clusters.ts';
import { resolveRunAs } from './resolve-run-as.ts';
import type { RunAs } from './resolve-run-as.ts';
import { runPgBinary } from './run-pg-binary.ts';
import { freePort, stopOnExit } from '@sagaflow/test-process';
import { TestPostgresError } from './test-postgres-error.ts';

const host = '127.0.0.1';
const superuser = 'sagaflow';
/** Start attempts when the chosen port was taken between {@link freePort} and the postmaster's bind. */
const maxPortAttempts = 5;
/** `--no-sync`: a cluster that is deleted after the run does not need initdb to fsync its files. */
const initdbFlags = ['-A', 'trust', '-U', superuser, '-E', 'UTF8', '--no-locale', '--no-sync', '--no-instructions'];

/**
 * Starts a throwaway PostgreSQL 15 cluster from the machine's binaries: a fresh data directory under
 * `os.tmpdir()`, a free port on 127.0.0.1, trust auth, durability off (fsync, synchronous_commit,
 * full_page_writes) for speed. Runs PostgreSQL as `postgres` when this process is root. The cluster
 * is stopped and deleted when this process exits, and clusters left by killed processes are reaped
 * at the next start.
 *
 * @example
 * const cluster = await startCluster();
 * const url = await createDatabase(cluster.adminUrl, uniqueDatabaseName('orders_test'));
 * // ... connect with `new pg.Pool({ connectionString: url })` ...
 * await cluster.stop();
 */
export async function startCluster(opts: StartClusterOptions = {}): Promise<PgCluster> {
  const log = opts.log ?? (() => {});
  const binaries = findPgBinaries(opts.binDir);
  const runAs = resolveRunAs();
  const destroyOptions: DestroyClusterOptions = { pgCtl: binaries.pgCtl, runAs, log };

  await reapStaleClusters(destroyOptions);

  const layout = clusterLayout(await mkdtemp(join(tmpdir(), clusterDirPrefix)));
  await writeFile(layout.ownerPidFile, `${process.pid}\n`);
  const cancelStopOnExit = stopOnExit(() => destroyClusterSync(layout, destroyOptions));

  let port: number;
  try {
    await mkdir(layout.socketDir);
    if (runAs !== undefined) {
      await chown(layout.clusterDir, runAs.uid, runAs.gid);
      await chown(layout.socketDir, runAs.uid, runAs.gid);
    }
    await runPgBinary(binaries.initdb, ['-D', layout.dataDir, ...initdbFlags], { runAs, cwd: layout.clusterDir });
    port = await startOnFreePort(layout, binaries, runAs, log);
  } catch (error) {
    await destroyCluster(layout, destroyOptions).catch(() => {});
    cancelStopOnExit();
    throw error;
  }
  log(`PostgreSQL started on ${host}:${port}, data in ${layout.dataDir}`);

  let stopping: Promise<void> | undefined;
  return {
    host,
    port,
    user: superuser,
    adminUrl: `postgresql://${superuser}@${host}:${port}/postgres`,
    dataDir: layout.dataDir,
    stop() {
      stopping ??= destroyCluster(layout, destroyOptions).finally(cancelStopOnExit);
      return stopping;
    },
    async restart() {
      if (stopping !== undefined) {
        throw new TestPostgresError('cluster_stopped', `The cluster on port ${port} was stopped; start a new one.`);
      }
      await runPgBinary(binaries.pgCtl, ['restart', '-m', 'fast', '-w', ...serverArgs(layout, port)], {
        runAs,
        cwd: layout.clusterDir,
      });
    },
    async pause() {
      if (stopping !== undefined) {
        throw new TestPostgresError('cluster_stopped', `The cluster on port ${port} was stopped; start a new one.`);
      }
      await runPgBinary(binaries.pgCtl, ['stop', '-m', 'fast', '-w', '-D', layout.dataDir], {
        runAs,
        cwd: layout.clusterDir,
      });
    },
    async resume() {
      if (stopping !== undefined) {
        throw new TestPostgresError('cluster_stopped', `The cluster on port ${port} was stopped; start a new one.`);
      }
      await runPgBinary(binaries.pgCtl, ['start', '-w', ...serverArgs(layout, port)], {
        runAs,
        cwd: layout.clusterDir,
      });
    },
  };
}

async function startOnFreePort(
  layout: ClusterLayout,
  binaries: PgBinaries,
  runAs: RunAs | undefined,
  log: (line: string) => void,
): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort(host);
    const logOffset = (await readLog(layout)).length;
    try {
      await runPgBinary(binaries.pgCtl, ['start', '-w', ...serverArgs(layout, port)], {
        runAs,
        cwd: layout.clusterDir,
      });
      return port;
    } catch (error) {
      const serverLog = (await readLog(layout)).slice(logOffset).trim();
      const portTaken = /could not bind|address already in use/i.test(serverLog);
      if (portTaken && attempt < maxPortAttempts) {
        log(`port ${port} was taken before PostgreSQL could bind it; retrying with another port`);
        continue;
      }
      throw new TestPostgresError(
        'start_failed',
        `PostgreSQL did not start on ${host}:${port} (attempt ${attempt}). Server log ${layout.logFile}:\n` +
          `${serverLog === '' ? '(empty)' : serverLog}\n` +
          (portTaken
            ? 'Every port tried was taken: something is grabbing ports on 127.0.0.1 fast; try again.'
            : 'Fix the cause shown in the log (shared memory, permissions, disk space) and run again.'),
        { cause: error },
      );
    }
  }
}

/** `-D`, `-l` and `-o` for `pg_ctl start` and `pg_ctl restart`, which must keep the same port. */
function serverArgs(layout: ClusterLayout, port: number): string[] {
  const serverOptions = [
    `-p ${port}`,
    `-k ${shellQuote(layout.socketDir)}`,
    `-h ${host}`,
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    '-c max_connections=200',
  ].join(' ');
  return ['-D', layout.dataDir, '-l', layout.logFile, '-o', serverOptions];
}

/** pg_ctl hands `-o` to /bin/sh, so a path in it must be quoted. */
function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

async function readLog(layout: ClusterLayout): Promise<string> {
  return readFile(layout.logFile, 'utf8').catch(() => '');
}
