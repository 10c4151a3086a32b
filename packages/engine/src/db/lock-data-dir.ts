import { readlinkSync } from 'node:fs';
import {
  lstat,
  readdir,
  readFile,
  realpath,
  rename,
  rm,
  rmdir,
  stat,
  unlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { EngineError } from '../errors/engine-error.ts';

/** The lock (a directory, created atomically) and the file beside it naming its holder. */
export const lockDirName = 'sagaflow.lock';
export const ownerFileName = 'sagaflow.lock.owner.json';

/** Who holds a data directory: enough for an operator to find the process and stop it. */
export interface DataDirOwner {
  pid: number;
  host: string;
  /** The holder's PID namespace (Linux): a pid is only comparable inside the same one. */
  pidNamespace: string | null;
  startedAt: string;
  command: string;
}

export interface DataDirLockOptions {
  /**
   * A lock its holder has not refreshed for this long is stale: the next process takes it over.
   * The holder refreshes it every few seconds. A lock whose holder's pid is gone from this host is
   * taken over at once, whatever its age. Default 30.
   */
  staleSeconds?: number;
  /**
   * Called if the lock is lost while held (another process took it over after this one stopped
   * refreshing it, or someone deleted it). This process must stop using the directory. Default:
   * throw the error, which ends the process.
   */
  onLost?: (err: EngineError) => void;
}

export interface DataDirLock {
  readonly owner: DataDirOwner;
  /** Removes the lock; the next process may open the directory at once. */
  release(): Promise<void>;
}

const defaultStaleSeconds = 30;

/**
 * Takes the exclusive lock on an embedded data directory, before anything opens it, and keeps it
 * fresh for as long as the process holds it. Two processes on one PGlite directory lose data and
 * corrupt indexes, so a second one is refused with `data_dir_locked`, naming the holder. A lock left
 * by a killed process is taken over when its pid is gone from this host, or once it is stale.
 */
export async function lockDataDir(dataDir: string, options: DataDirLockOptions = {}): Promise<DataDirLock> {
  const dir = await realpath(dataDir);
  const staleMs = Math.max(2, options.staleSeconds ?? defaultStaleSeconds) * 1000;
  const lockPath = join(dir, lockDirName);
  const ownerPath = join(dir, ownerFileName);
  let lost = false;
  // Set once release() begins. proper-lockfile's refresh stats the lock before it touches it, and a
  // stat that was in flight when the lock was released answers ENOENT, which it reports as a lost lock
  // (its touch checks for a release, its stat does not). A lock this process gave up is not lost.
  let releasing = false;
  // Loaded here, not at import: proper-lockfile installs process signal and exit listeners when it is
  // loaded (signal-exit), and a host that never locks a PGlite directory must get none (signals are
  // the host's to handle).
  const { default: lockfile } = await import('proper-lockfile');
  const acquire = () =>
    lockfile.lock(dir, {
      lockfilePath: lockPath,
      realpath: false,
      stale: staleMs,
      update: Math.min(5000, staleMs / 2),
      retries: 0,
      onCompromised: (cause) => {
        if (releasing) return;
        lost = true;
        const err = new EngineError(
          'data_dir_locked',
          `lost the lock on data directory ${dir} (${cause.message}): another process may have opened it. This process must stop using it now.`,
          { cause },
        );
        if (options.onLost) options.onLost(err);
        else throw err;
      },
    });

  // proper-lockfile removes a stale lock with `rmdir`, which fails on a regular file or a directory
  // something wrote into (ENOTDIR, ENOTEMPTY): such a lock, once stale, is cleared here and taken once more.
  const acquireOrClear = () =>
    acquire().catch(async (err: unknown) => {
      if (!isForeignLockForm(err)) throw err;
      await clearStaleForeignLock(lockPath, staleMs);
      return acquire();
    });

  let unlock: () => Promise<void>;
  try {
    unlock = await acquireOrClear().catch(async (err: unknown) => {
      if (!isLocked(err)) throw err;
      const holder = await readOwner(ownerPath);
      if (!holder || !isGoneFromThisHost(holder)) throw err;
      // The holder was killed without releasing: its lock is stale now. Re-read the owner just
      // before, so a process that took the lock over in between keeps it.
      const still = await readOwner(ownerPath);
      if (still?.pid === holder.pid && still.startedAt === holder.startedAt)
        await utimes(lockPath, 0, 0).catch(() => undefined);
      return acquireOrClear();
    });
  } catch (err) {
    if (isLocked(err)) throw await lockedError(dir, lockPath, ownerPath, staleMs);
    const remedy = isForeignLockForm(err)
      ? ` ${lockPath} is not a lock Sagaflow made (a file, or a directory with files in it); if no Sagaflow process uses this data directory, delete ${lockPath} and start again.`
      : '';
    throw new EngineError(
      'data_dir_unusable',
      `could not lock data directory ${dir}: ${err instanceof Error ? err.message : String(err)}.${remedy}`,
      { cause: err },
    );
  }

  const owner = thisProcess();
  try {
    const tmp = `${ownerPath}.${process.pid}.tmp`;
    await writeFile(tmp, `${JSON.stringify(owner, null, 2)}\n`);
    await rename(tmp, ownerPath);
  } catch (err) {
    await unlock().catch(() => undefined);
    throw new EngineError('data_dir_unusable', `could not record the owner of data directory ${dir}: ${String(err)}`, {
      cause: err,
    });
  }

  let released: Promise<void> | null = null;
  return {
    owner,
    release: () =>
      (released ??= (async () => {
        // A lost lock is another process's now: its owner file too.
        if (lost) return;
        releasing = true;
        // The owner file goes first: once the lock is gone, the next holder writes its own.
        await rm(ownerPath, { force: true });
        await unlock();
      })()),
  };
}

const isLocked = (err: unknown) => (err as { code?: unknown } | null)?.code === 'ELOCKED';

/** proper-lockfile's `rmdir` of a stale lock that is not its own empty directory. */
const isForeignLockForm = (err: unknown) =>
  ['ENOTDIR', 'ENOTEMPTY', 'EEXIST'].includes(String((err as { code?: unknown } | null)?.code));

/**
 * Clears a stale lock that is not proper-lockfile's empty directory, so that the next attempt takes it
 * over as ADR 0014 says. Only a lock unchanged for `staleMs` is touched: a live holder refreshes its
 * lock every few seconds, and its lock is an empty directory. A regular file is unlinked (an unlink
 * never removes a directory another process may just have made); a directory loses the entries seen in
 * it, by name, then is removed with `rmdir` (which removes only an empty directory), so a fresh lock
 * made in its place in between keeps what it has, as in proper-lockfile's own stale takeover.
 */
async function clearStaleForeignLock(lockPath: string, staleMs: number): Promise<void> {
  const found = await lstat(lockPath).catch(() => null);
  if (!found || found.mtimeMs >= Date.now() - staleMs) return;
  if (!found.isDirectory()) {
    await unlink(lockPath).catch(() => undefined);
    return;
  }
  const entries = await readdir(lockPath).catch(() => [] as string[]);
  for (const entry of entries) await rm(join(lockPath, entry), { recursive: true, force: true });
  await rmdir(lockPath).catch(() => undefined);
}

function ownPidNamespace(): string | null {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return null;
  }
}

function thisProcess(): DataDirOwner {
  const command = process.argv.join(' ');
  return {
    pid: process.pid,
    host: hostname(),
    pidNamespace: ownPidNamespace(),
    startedAt: new Date(Date.now() - process.uptime() * 1000).toISOString(),
    command: command.length > 300 ? `${command.slice(0, 300)}…` : command,
  };
}

async function readOwner(path: string): Promise<DataDirOwner | null> {
  try {
    const o = JSON.parse(await readFile(path, 'utf8')) as Partial<DataDirOwner>;
    if (typeof o.pid !== 'number' || typeof o.host !== 'string') return null;
    return {
      pid: o.pid,
      host: o.host,
      pidNamespace: typeof o.pidNamespace === 'string' ? o.pidNamespace : null,
      startedAt: typeof o.startedAt === 'string' ? o.startedAt : '?',
      command: typeof o.command === 'string' ? o.command : '?',
    };
  } catch {
    return null;
  }
}

/** True only when the holder ran on this host, in this PID namespace, and its pid no longer exists. */
function isGoneFromThisHost(holder: DataDirOwner): boolean {
  if (holder.host !== hostname() || holder.pidNamespace !== ownPidNamespace()) return false;
  if (holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

async function lockedError(dir: string, lockPath: string, ownerPath: string, staleMs: number): Promise<EngineError> {
  const found = await lstat(lockPath).catch(() => null);
  if (found && !found.isDirectory()) {
    // Not a lock this code makes (a file someone created or copied): say so, and how to clear it.
    const changed = Math.max(0, Math.round((Date.now() - found.mtimeMs) / 1000));
    return new EngineError(
      'data_dir_locked',
      `data directory ${dir} has a file ${lockPath} (changed ${changed} s ago) where its lock belongs: not a lock Sagaflow made. ` +
        `It is taken over ${staleMs / 1000} s after its last change; if no Sagaflow process uses this data directory, delete ${lockPath} to start at once.`,
    );
  }
  const holder = await readOwner(ownerPath);
  const refreshed = await stat(lockPath).then(
    (s) => `${Math.max(0, Math.round((Date.now() - s.mtimeMs) / 1000))} s ago`,
    () => 'just now',
  );
  const who = holder
    ? `pid ${holder.pid} on host ${holder.host} (started ${holder.startedAt}, command: ${holder.command})`
    : `a process that has not recorded itself yet in ${ownerPath}`;
  return new EngineError(
    'data_dir_locked',
    `data directory ${dir} is in use by ${who}; its lock ${lockPath} was refreshed ${refreshed}. ` +
      `One process owns an embedded database: stop that process first (a clean stop releases the lock at once), ` +
      `give this one its own data directory, or run both on PostgreSQL. ` +
      `A lock left by a killed process is taken over as soon as its pid is gone from this host, or ${staleMs / 1000} s after its last refresh.`,
  );
}
