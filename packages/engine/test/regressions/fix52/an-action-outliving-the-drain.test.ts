import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import { createEngine, defineAction, defineFlow } from '../../../src/index.ts';
import { copyDataDir } from '../../support/pglite-templates.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { compiledEngineScript, compiledEnv } from '../../support/compiled.ts';

/**
 * Review 52, D4. The README's shutdown: `stopWorkers(ms)` answers `{ drained: false }` (an action is still
 * running), the host closes its database, then the action finishes. The outcome cannot be written any more:
 * the engine says so once and lets go (ADR 0129). It used to write it again and again to the closed handle
 * ("writing step outcomes failed; trying again", backing off to 5 s, ~20 tries) and its retry timers kept
 * the process alive for about a minute. The step stays as its record says, Running under the worker that
 * is gone, and is reclaimed like any step of a worker that died (ADR 0010): here by engine.reclaimStep.
 */
const host = fileURLToPath(new URL('./support/outliving-drain-host.ts', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../../../../', import.meta.url));

// The same flow as the host's, for the engine that reclaims the step; its action answers differently.
const slow = defineAction({ name: 'fix52.slow', run: async () => ({ ok: 2 }) });
const flow = defineFlow({
  name: 'fix52.slow-flow',
  version: 1,
  run: async (ctx) => {
    await ctx.action(slow, {});
    return 'done';
  },
});

type Line = { host?: true; at?: string; runId?: string; drained?: boolean; level?: number; msg?: string };

describe(`an action that outlives stopWorkers' drain, then db.close() (${testDbKind()}, real process)`, () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  /** Where the host process opens its database, and how this test opens the same one after it. */
  async function target(): Promise<{ args: string[]; open: () => Promise<Database> }> {
    if (testDbKind() === 'postgres') {
      const db = await openTestDatabase();
      const url = (db as { url?: string }).url as string;
      await db.close();
      return { args: ['postgres', url], open: () => createDatabase({ kind: 'postgres', url, poolSize: 4 }) };
    }
    const templates = inject('pgliteTemplates');
    const dir = mkdtempSync(join(templates.root, 'fix52-'));
    copyDataDir(templates.migrated, dir);
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    return { args: ['pglite', dir], open: () => createDatabase({ kind: 'pglite', dataDir: dir }) };
  }

  it('the process exits on its own within seconds, logs the held outcome once, and the step stays Running and reclaimable', async () => {
    const { args, open } = await target();
    const proc = spawn(process.execPath, [compiledEngineScript(host), ...args], {
      cwd: repoRoot,
      env: compiledEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanup.push(() => void proc.kill('SIGKILL'));
    let out = '';
    let err = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
    let exit: string | null = null;
    proc.once('exit', (code, signal) => (exit = signal ?? `code ${code}`));
    const lines = () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Line);

    const closed = await waitFor(
      () =>
        `the host to close its database (stdout ${JSON.stringify(out)}, stderr ${JSON.stringify(err)}, exit ${exit})`,
      async () => lines().find((l) => l.at === 'closed'),
      25_000,
    );
    expect(closed.drained).toBe(false);
    const closedAt = Date.now();
    // Progress, not a stopwatch: the process has nothing left to do once its database is closed. Before
    // the fix it lived ~70 s more, retrying; 8 s covers a loaded machine's exit.
    const ended = await waitFor(
      () =>
        `the host to exit on its own after db.close() (still running after ${Date.now() - closedAt} ms; log ${out})`,
      async () => exit ?? undefined,
      8_000,
    ).catch((e: Error) => e.message);
    const after = lines().slice(lines().indexOf(closed) + 1);
    expect({
      ended,
      logged: after.filter((l) => (l.level ?? 0) >= 40).map((l) => l.msg),
    }).toEqual({
      ended: 'code 0',
      logged: [expect.stringMatching(/^the database was closed .* step 1 \(fix52\.slow\) stays Running/)],
    });

    // The record is as the worker left it: the step Running under that worker, its outcome nowhere.
    const db = await open();
    cleanup.push(() => db.close());
    const engine = createEngine({
      db,
      flows: [flow],
      actions: [slow],
      logger: pino({ level: 'silent' }),
      config: { worker: { poll_interval_ms: 20, dead_after_seconds: 1 } },
    });
    cleanup.push(() => engine.stopWorkers(5_000).then(() => undefined));
    const runId = closed.runId as string;
    const before = await engine.getRun(runId);
    expect(before?.actions.map((a) => ({ status: a.status, attempts: a.attempts, output: a.output }))).toEqual([
      { status: 'Running', attempts: 1, output: null },
    ]);
    // Reclaimable: once the host's worker is gone (no beat for dead_after_seconds), the repair runs it again.
    await waitFor(
      'the host worker to count as gone and its step to be reclaimed',
      async () => ((await engine.reclaimStep(runId)).reclaimed ? true : undefined),
      15_000,
    );
    engine.startWorkers();
    const done = await waitFor(
      'the reclaimed run to complete',
      async () => {
        const r = await engine.getRun(runId);
        return r?.run.status === 'Completed' ? r : undefined;
      },
      15_000,
    );
    expect(done.actions.map((a) => ({ status: a.status, attempts: a.attempts, output: a.output }))).toEqual([
      { status: 'Completed', attempts: 2, output: { ok: 2 } },
    ]);
  }, 60_000);
});
