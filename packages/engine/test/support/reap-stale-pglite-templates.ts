import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isProcessAlive } from '@sagaflow/test-postgres';

/** What every run's template directory is called, in memory-backed storage where there is some. */
export const templatesPrefix = 'sagaflow-pglite-';
/** Inside a run's template directory: the pid of the process that made it (vitest's main process). */
const ownerFile = 'run.pid';
/**
 * A directory with no owner file is being made right now, or was made by a run older than the owner
 * file: left alone for longer than any run lasts.
 */
const unownedGraceMs = 6 * 3_600_000;

/** Marks `root` as this process's, so a later run can tell when it was left behind. */
export function claimTemplatesDir(root: string): void {
  writeFileSync(join(root, ownerFile), String(process.pid));
}

/**
 * Deletes the template directories in `base` whose run is gone: what a killed test run leaves in
 * /dev/shm, where it holds memory until the machine restarts. Returns the directories deleted.
 */
export function reapStalePgliteTemplates(base: string): string[] {
  const reaped: string[] = [];
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return reaped;
  }
  for (const name of names) {
    if (!name.startsWith(templatesPrefix)) continue;
    const dir = join(base, name);
    const owner = readOwner(dir);
    if (owner === undefined ? isYoung(dir) : isProcessAlive(owner)) continue;
    try {
      rmSync(dir, { recursive: true, force: true });
      reaped.push(dir);
    } catch {
      // Another user's, or being removed by someone else: leave it.
    }
  }
  return reaped;
}

function readOwner(dir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dir, ownerFile), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isYoung(dir: string): boolean {
  try {
    return Date.now() - statSync(dir).mtimeMs < unownedGraceMs;
  } catch {
    return true; // gone already
  }
}
