import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import { lockDataDir, lockDirName, ownerFileName } from '../../../src/db/lock-data-dir.ts';
import type { EngineError } from '../../../src/errors/engine-error.ts';
import { copyDataDir } from '../../support/pglite-templates.ts';
import { waitFor } from '../../support/wait-for.ts';
import { compiledEngineScript, compiledEnv } from '../../support/compiled.ts';

const repoRoot = fileURLToPath(new URL('../../../../../', import.meta.url));
const holderScript = fileURLToPath(new URL('../../support/hold-data-dir.ts', import.meta.url));

/** A real process that opens `dataDir`, records `note` and holds the directory until stopped. */
function holder(dataDir: string, note: string) {
  const child = spawn(process.execPath, [compiledEngineScript(holderScript), dataDir, note], {
    cwd: repoRoot,
    env: compiledEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null; stderr: string }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, stderr })),
  );
  const ready = new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      const m = /ready (\d+)/.exec(d.toString());
      if (m) resolve(Number(m[1]));
    });
    void exited.then((e) => reject(new Error(`holder exited before it was ready: ${e.code} ${e.stderr}`)));
  });
  // A holder that is meant to be refused never gets ready: its `exited` is what the test reads.
  ready.catch(() => undefined);
  return { child, ready, exited };
}

async function notesIn(dataDir: string): Promise<string[]> {
  const db = await createDatabase({ kind: 'pglite', dataDir });
  try {
    const rows = await db.driver.query<{ note: string }>('select note from notes order by note');
    return rows.map((r) => r.note);
  } finally {
    await db.close();
  }
}

// A PGlite directory is opened by a holder process and by this one (seconds on an idle machine, more loaded).
const slow = 300_000;
/**
 * A data directory no process holds, initdb already run in it: a copy of the run's `fresh` template (ADR
 * 0084), where a new directory cost each holder initdb's ~8 s of WASM. The lock is under test, not a
 * directory's first start; the holder still creates its table and writes its note.
 */
const freshDir = () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'sagaflow-lock-')), 'data');
  copyDataDir(inject('pgliteTemplates').fresh, dir);
  return dir;
};

// The lock guards PGlite's directory; on the PostgreSQL project there is nothing embedded to test.
describe('one process owns an embedded data directory (issue 13, item 10)', () => {
  it(
    "a second process is refused with data_dir_locked naming the holder's pid; the holder's data is untouched and a clean stop releases the lock at once",
    async () => {
      const dataDir = freshDir();
      const first = holder(dataDir, 'first');
      const pid = await first.ready;

      const intruder = holder(dataDir, 'second');
      const opened = await Promise.race([intruder.ready.then(() => true), intruder.exited.then(() => false)]);
      if (opened) intruder.child.kill('SIGKILL');
      expect(opened, 'a second process opened the held directory').toBe(false);
      const second = await intruder.exited;
      expect(second.code).toBe(3);
      expect(second.stderr).toMatch(/^data_dir_locked: data directory .* is in use by pid (\d+) on host /);
      expect(second.stderr).toContain(`pid ${pid} on host ${hostname()}`);
      expect(second.stderr).toContain('stop that process first');

      const here = await createDatabase({ kind: 'pglite', dataDir }).catch((e: unknown) => e as EngineError);
      expect(here).toMatchObject({ code: 'data_dir_locked' });
      expect((here as EngineError).message).toContain(`pid ${pid}`);
      // The holder's command line: its script, compiled (support/compiled.ts).
      expect((here as EngineError).message).toContain(compiledEngineScript(holderScript));

      first.child.kill('SIGTERM');
      expect((await first.exited).code).toBe(0);
      expect(existsSync(join(dataDir, lockDirName))).toBe(false);
      // Opened at once: no stale window to wait out after a clean stop.
      expect(await notesIn(dataDir)).toEqual(['first']);
    },
    slow,
  );

  it(
    'a SIGKILLed holder leaves its lock behind; the next process takes it over at once (its pid is gone) and sees everything committed before',
    async () => {
      const dataDir = freshDir();
      const killed = holder(dataDir, 'committed before the kill');
      await killed.ready;
      killed.child.kill('SIGKILL');
      expect((await killed.exited).signal).toBe('SIGKILL');
      expect(existsSync(join(dataDir, lockDirName))).toBe(true);

      // An hour's stale window: only the dead-pid rule can let this open through.
      const db = await createDatabase({ kind: 'pglite', dataDir, lock: { staleSeconds: 3600 } });
      try {
        const rows = await db.driver.query<{ note: string }>('select note from notes');
        expect(rows.map((r) => r.note)).toEqual(['committed before the kill']);
      } finally {
        await db.close();
      }
    },
    slow,
  );

  it('a lock from another host, or from a live pid, is refused while fresh and taken over only once stale', async () => {
    for (const owner of [
      { pid: 1, host: 'another-host', pidNamespace: null },
      // Alive on this host (our parent): the dead-pid rule must not fire.
      { pid: process.ppid, host: hostname(), pidNamespace: readlinkSync('/proc/self/ns/pid') },
    ]) {
      const dir = mkdtempSync(join(tmpdir(), 'sagaflow-lock-'));
      mkdirSync(join(dir, lockDirName));
      writeFileSync(
        join(dir, ownerFileName),
        JSON.stringify({ ...owner, startedAt: '2026-01-01T00:00:00.000Z', command: 'node elsewhere.js' }),
      );
      const refused = await lockDataDir(dir, { staleSeconds: 2 }).catch((e: unknown) => e as EngineError);
      expect(refused).toMatchObject({ code: 'data_dir_locked' });
      expect((refused as EngineError).message).toContain(`pid ${owner.pid} on host ${owner.host}`);

      const longAgo = new Date(Date.now() - 10_000);
      utimesSync(join(dir, lockDirName), longAgo, longAgo);
      const lock = await lockDataDir(dir, { staleSeconds: 2 });
      expect(lock.owner.pid).toBe(process.pid);
      const again = await lockDataDir(dir, { staleSeconds: 2 }).catch((e: unknown) => e as EngineError);
      expect((again as EngineError).message).toContain(`pid ${process.pid} on host ${hostname()}`);
      await lock.release();
      expect(existsSync(join(dir, lockDirName))).toBe(false);
      expect(existsSync(join(dir, ownerFileName))).toBe(false);
    }
  });

  it('a lock lost while held (deleted, or taken over) is reported to the holder, and its release then removes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sagaflow-lock-'));
    const lost: EngineError[] = [];
    const lock = await lockDataDir(dir, { staleSeconds: 2, onLost: (err) => lost.push(err) });
    rmSync(join(dir, lockDirName), { recursive: true });
    const err = await waitFor('the holder to notice its lock is gone', async () => lost[0]);
    expect(err.code).toBe('data_dir_locked');
    expect(err.message).toMatch(/lost the lock on data directory/);

    const next = await lockDataDir(dir);
    await lock.release();
    expect(existsSync(join(dir, lockDirName))).toBe(true);
    await next.release();
  });
});
