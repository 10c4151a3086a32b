import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

// Review 52 D2 in the workspace (the installed package's own case is in test/package): importing the engine
// adds no process listener; locking a PGlite data directory is what loads the lock library, and its
// listeners with it, which also shows this check sees them.
// Run inside the engine's folder: the package imports itself by name, as a host would.
const engineDir = fileURLToPath(new URL('..', import.meta.url));

const script = `
const events = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT', 'SIGUSR2', 'exit', 'beforeExit', 'uncaughtException', 'unhandledRejection'];
const count = () => Object.fromEntries(events.map((e) => [e, process.listenerCount(e)]));
const added = (before) => { const now = count(); return Object.fromEntries(events.filter((e) => now[e] !== before[e]).map((e) => [e, now[e] - before[e]])); };
const before = count();
await import('@sagaflow/engine');
await import('@sagaflow/engine/testing');
const onImport = added(before);
const { lockDataDir } = await import('./src/db/lock-data-dir.ts');
const lock = await lockDataDir(process.argv[1]);
const onLock = added(before);
await lock.release();
console.log(JSON.stringify({ onImport, onLock }));
`;

it('importing both entry points adds no process listener; locking a PGlite data directory is what adds them', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sagaflow-listeners-'));
  try {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script, dir],
      { cwd: engineDir, timeout: 60_000 },
    );
    const r = JSON.parse(stdout.trim().split('\n').at(-1)!) as { onImport: object; onLock: Record<string, number> };
    expect(r.onImport).toEqual({});
    expect(r.onLock.SIGTERM).toBeGreaterThan(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
