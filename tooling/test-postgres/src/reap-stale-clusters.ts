import { readFile, readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { clusterDirPrefix, clusterLayout } from './cluster-layout.ts';
import { destroyCluster } from './destroy-cluster.ts';
import type { DestroyClusterOptions } from './destroy-cluster.ts';

/** A directory with no owner.pid this young is probably being created right now by another process. */
const unownedGraceMs = 60_000;

/**
 * Stops and deletes `sagaflow-pg-*` directories in `dir` whose owner process is no longer alive:
 * what a SIGKILLed test run leaves behind. Returns the directories reaped. Never throws for a
 * directory it cannot clean (e.g. another user's); it logs and moves on.
 */
export async function reapStaleClusters(options: DestroyClusterOptions & { dir?: string }): Promise<string[]> {
  const dir = options.dir ?? tmpdir();
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const reaped: string[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory() || !entry.name.startsWith(clusterDirPrefix)) continue;
    const layout = clusterLayout(join(dir, entry.name));
    const owner = await readOwnerPid(layout.ownerPidFile);
    if (owner === undefined ? await isYoung(layout.clusterDir) : isAlive(owner)) continue;
    options.log(`reaping ${layout.clusterDir}: owner ${owner === undefined ? 'unknown' : `pid ${owner}`} is gone`);
    try {
      await destroyCluster(layout, options);
      reaped.push(layout.clusterDir);
    } catch (error) {
      options.log(`could not reap ${layout.clusterDir}: ${String(error)}`);
    }
  }
  return reaped;
}

async function readOwnerPid(file: string): Promise<number | undefined> {
  try {
    const pid = Number((await readFile(file, 'utf8')).trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

async function isYoung(path: string): Promise<boolean> {
  try {
    return Date.now() - (await stat(path)).mtimeMs < unownedGraceMs;
  } catch {
    return true; // vanished: someone else reaped it
  }
}

/** Whether process `pid` exists (another user's counts: signalling it is refused, not unknown). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === 'EPERM';
  }
}
