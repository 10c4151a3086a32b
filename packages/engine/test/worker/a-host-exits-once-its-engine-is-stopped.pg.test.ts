import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/index.ts';
import { openTestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';
import { compiledEngineScript, compiledEnv } from '../support/compiled.ts';

const host = fileURLToPath(new URL('../support/stopping-host.ts', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));

/**
 * A host's graceful shutdown: once `stopWorkers()` has drained and the database is closed, the engine keeps
 * nothing alive, so the process ends by itself. The drain's bound (here an hour) is a bound, not a wait: the
 * pool used to race the drain against a timer of that length and leave it running, which held the process
 * for the rest of it (10 s by default; found by the bench, whose phases took 10 s longer than their loops).
 */
describe('a host process ends by itself once its engine is stopped (real PostgreSQL, real process)', () => {
  let db: Database & { url?: string };
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('runs its flows, stops its workers with an hour-long drain bound, closes its database, and exits', async () => {
    if (!db.url) throw new Error('this test needs the PostgreSQL project (a database URL for the host)');
    const proc = spawn(process.execPath, [compiledEngineScript(host), db.url], {
      cwd: repoRoot,
      env: compiledEnv(),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    let exit: string | null = null;
    proc.once('exit', (code, signal) => (exit = signal ?? `code ${code}`));
    try {
      const stopped = await waitFor(
        () => `the host to stop its engine (it printed: ${JSON.stringify(out)}, exit: ${exit})`,
        async () => /^stopped .*\n/m.exec(out)?.[0] ?? undefined,
        60_000,
      );
      expect(stopped).toBe('stopped true Completed,Completed,Completed,Completed,Completed\n');
      // Progress, not a stopwatch: the process has nothing left to do; 30 s is only how long the test waits.
      const ended = await waitFor(
        () => `the host process to end by itself after "${stopped.trim()}" (still running)`,
        async () => exit ?? undefined,
        30_000,
      );
      expect(ended).toBe('code 0');
    } finally {
      proc.kill('SIGKILL');
    }
  });
});
