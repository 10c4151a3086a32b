import { existsSync, readFileSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';

import type { ClusterLayout } from './cluster-layout.ts';
import type { RunAs } from './resolve-run-as.ts';
import { runPgBinary, runPgBinarySync } from './run-pg-binary.ts';

export interface DestroyClusterOptions {
  readonly pgCtl: string;
  readonly runAs: RunAs | undefined;
  readonly log: (line: string) => void;
}

/**
 * Stops the postmaster of `layout` if one may be running (`-m immediate`: no checkpoint, clients cut
 * off) and deletes the whole cluster directory. Safe on a half-built or already-deleted cluster.
 */
export async function destroyCluster(layout: ClusterLayout, options: DestroyClusterOptions): Promise<void> {
  if (existsSync(postmasterPidFile(layout))) {
    try {
      await runPgBinary(options.pgCtl, stopArgs(layout), { runAs: options.runAs, cwd: '/' });
    } catch (error) {
      killPostmaster(layout, error, options.log);
    }
  }
  await rm(layout.clusterDir, { recursive: true, force: true, maxRetries: 3 });
}

/** Synchronous twin of {@link destroyCluster}, for process 'exit' handlers. */
export function destroyClusterSync(layout: ClusterLayout, options: DestroyClusterOptions): void {
  if (existsSync(postmasterPidFile(layout))) {
    try {
      runPgBinarySync(options.pgCtl, stopArgs(layout), { runAs: options.runAs, cwd: '/' });
    } catch (error) {
      killPostmaster(layout, error, options.log);
    }
  }
  rmSync(layout.clusterDir, { recursive: true, force: true, maxRetries: 3 });
}

function stopArgs(layout: ClusterLayout): string[] {
  return ['stop', '-m', 'immediate', '-w', '-D', layout.dataDir];
}

function postmasterPidFile(layout: ClusterLayout): string {
  return join(layout.dataDir, 'postmaster.pid');
}

/**
 * Last resort when pg_ctl could not stop the server (usually because it already died and left a stale
 * postmaster.pid, in which case there is nothing to kill). Backends notice the postmaster's death
 * and exit on their own.
 */
function killPostmaster(layout: ClusterLayout, error: unknown, log: (line: string) => void): void {
  let pid: number;
  try {
    pid = Number(readFileSync(postmasterPidFile(layout), 'utf8').split('\n')[0]);
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0) return;
  try {
    process.kill(pid, 'SIGKILL');
    log(`pg_ctl stop failed for ${layout.dataDir} (${String(error)}); killed postmaster ${pid}`);
  } catch {
    // Already gone: the stale pid file was why pg_ctl failed.
  }
}
