import { readFileSync, rmSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Every server lives in `os.tmpdir()/sagaflow-nats-XXXXXX`; the reaper finds leftovers by this prefix. */
export const serverDirPrefix = 'sagaflow-nats-';

export interface ServerDir {
  /** Removed as a whole on stop. */
  readonly dir: string;
  /** JetStream's store (`-sd`), owned by the account the server runs as. */
  readonly storeDir: string;
  /** Written by nats-server itself (`-P`): the pid to signal, not runuser's. */
  readonly serverPidFile: string;
  /** Pid of the process that started the server; a dead owner means the server is an orphan. */
  readonly ownerPidFile: string;
}

export function serverDir(dir: string): ServerDir {
  return {
    dir,
    storeDir: join(dir, 'jetstream'),
    serverPidFile: join(dir, 'nats-server.pid'),
    ownerPidFile: join(dir, 'owner.pid'),
  };
}

/** SIGKILLs the server of `layout` if its pid file names a live process, then deletes the directory. */
export function destroyServerDirSync(layout: ServerDir): void {
  const pid = readPidSync(layout.serverPidFile);
  if (pid !== undefined) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  rmSync(layout.dir, { recursive: true, force: true, maxRetries: 3 });
}

/** A directory with no owner.pid this young is probably being set up right now by another process. */
const unownedGraceMs = 60_000;

/**
 * Kills and deletes the servers of `sagaflow-nats-*` directories whose owner process is dead: what a
 * SIGKILLed test run leaves behind. Never throws; returns the directories reaped.
 */
export async function reapStaleServers(log: (line: string) => void, dir = tmpdir()): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const reaped: string[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory() || !entry.name.startsWith(serverDirPrefix)) continue;
    const layout = serverDir(join(dir, entry.name));
    const owner = readPid(await readFile(layout.ownerPidFile, 'utf8').catch(() => ''));
    const stale = owner === undefined ? !(await isYoung(layout.dir)) : !isAlive(owner);
    if (!stale) continue;
    log(`reaping ${layout.dir}: its owner is gone`);
    try {
      destroyServerDirSync(layout);
      reaped.push(layout.dir);
    } catch (error) {
      log(`could not reap ${layout.dir}: ${String(error)}`);
    }
  }
  return reaped;
}

function readPidSync(file: string): number | undefined {
  try {
    return readPid(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

function readPid(text: string): number | undefined {
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

async function isYoung(path: string): Promise<boolean> {
  try {
    return Date.now() - (await stat(path)).mtimeMs < unownedGraceMs;
  } catch {
    return true;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === 'EPERM';
  }
}
