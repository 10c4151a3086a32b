import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import { lockDataDir, lockDirName, ownerFileName } from '../../../src/db/lock-data-dir.ts';

const freshDir = () => mkdtempSync(join(tmpdir(), 'sagaflow-r34-lock-'));

/** What a lock attempt came to: acquired (then released), or the error's code and message. */
async function attempt(dir: string): Promise<{ acquired: true } | { acquired: false; code: unknown; message: string }> {
  try {
    const lock = await lockDataDir(dir, { staleSeconds: 2 });
    await lock.release();
    return { acquired: true };
  } catch (err) {
    return { acquired: false, code: (err as { code?: unknown }).code, message: (err as Error).message };
  }
}

// ADR 0014 (docs/adr/0014-…, lines 30-33): "A lock is taken over (1) at once if its owner file names a
// pid … that no longer exists …, or (2) once its mtime is older than `staleSeconds`". README "One
// process owns the embedded database": a refusal says what to do. A left-behind `sagaflow.lock` that
// is not the empty directory proper-lockfile makes (a file someone touched, a copy of the directory
// that turned it into a file, a directory something wrote into) must not lock the data directory
// forever with an error that names neither the file nor the remedy.
describe('review 34: a stale lock that is not an empty directory', () => {
  it.each([
    ['a regular file with garbage in it', (lock: string) => writeFileSync(lock, 'garbage\n')],
    ['an empty regular file', (lock: string) => writeFileSync(lock, '')],
    [
      'a directory with a file in it',
      (lock: string) => {
        mkdirSync(lock);
        writeFileSync(join(lock, 'stray'), 'x');
      },
    ],
  ])('%s, stale for hours: taken over, or refused naming the lock and how to clear it', async (_, make) => {
    const dir = freshDir();
    const lockPath = join(dir, lockDirName);
    make(lockPath);
    utimesSync(lockPath, 0, 0);
    const first = await attempt(dir);
    const second = await attempt(dir);
    for (const r of [first, second]) {
      if (r.acquired) continue;
      // A refusal is only acceptable if it tells the operator which path to remove.
      expect(r.message).toContain(lockPath);
      expect(r.message).toMatch(/remove|delete/i);
    }
  });

  it('held: a stale empty lock directory whose owner file is garbage is taken over', async () => {
    const dir = freshDir();
    mkdirSync(join(dir, lockDirName));
    writeFileSync(join(dir, ownerFileName), '{not json');
    utimesSync(join(dir, lockDirName), 0, 0);
    expect(await attempt(dir)).toEqual({ acquired: true });
  });

  it('held: a data directory path with spaces and non-ASCII letters is locked, opened, written and reopened', async () => {
    const dataDir = join(freshDir(), 'données de l’été 数据');
    const db = await createDatabase({ kind: 'pglite', dataDir });
    await db.driver.query('create table kept (v text)');
    await db.driver.query(`insert into kept values ('été')`);
    await db.close();
    const again = await createDatabase({ kind: 'pglite', dataDir });
    try {
      expect(await again.driver.query<{ v: string }>('select v from kept')).toEqual([{ v: 'été' }]);
    } finally {
      await again.close();
    }
  }, 300_000);
});
