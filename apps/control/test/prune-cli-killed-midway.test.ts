import { execFile, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createDatabase, type Database } from '@sagaflow/engine';
import { countHistoryByTag, countOrphanRows, seedHistory } from '@sagaflow/engine/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { controlEntry, withoutSourceCondition } from './support/compiled-control.ts';
import { testDatabaseUrl } from './support/test-plane.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const day = 86_400_000;
/** The CLI from this run's build (support/compiled-control.ts), without the source condition. */
const cliPrune = () => [...controlEntry('cli', 'build'), 'prune'];
const cliArgs = () => [...cliPrune(), '--older-than', '30d'];
const cliEnv = (url: string) => ({
  ...process.env,
  NODE_OPTIONS: withoutSourceCondition(process.env.NODE_OPTIONS),
  LOG_LEVEL: 'silent',
  DATABASE_URL: url,
});

/** The real CLI, to the end. */
function prune(url: string, extra: string[], base = cliArgs): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...base(), ...extra],
      { cwd: root, env: cliEnv(url), timeout: 120_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: stdout, err: stderr }),
    );
  });
}

/** The real CLI, SIGKILLed as soon as it reports its first batch; resolves with that line. */
function pruneKilledAfterFirstBatch(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...cliArgs(), '--batch-size', '20'], {
      cwd: root,
      env: cliEnv(url),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let first: string | null = null;
    createInterface({ input: child.stderr }).on('line', (line) => {
      if (first === null && line.startsWith('prune: ')) {
        first = line;
        child.kill('SIGKILL');
      }
    });
    child.on('exit', (code, signal) =>
      first !== null && signal === 'SIGKILL'
        ? resolve(first)
        : reject(new Error(`prune exited (${code ?? signal}) before it was killed after a progress line`)),
    );
  });
}

describe('sagaflow prune, killed half-way, leaves a consistent database and a rerun finishes (PostgreSQL)', () => {
  let url: string;
  let db: Database;
  let before: Record<string, number>;
  beforeAll(async () => {
    url = await testDatabaseUrl('prune');
    db = await createDatabase({ kind: 'postgres', url });
    const now = Date.now();
    // Enough old runs for hundreds of batches of 20: the kill lands long before the last one.
    await seedHistory(db.driver, { tag: 'old-done', at: new Date(now - 40 * day), runs: 6000 });
    await seedHistory(db.driver, { tag: 'old-open', at: new Date(now - 40 * day), runs: 20, runState: 'open' });
    await seedHistory(db.driver, { tag: 'new-done', at: new Date(now - day), runs: 50 });
    await seedHistory(db.driver, { tag: 'old-instance', at: new Date(now - 40 * day), instances: 30, inbox: 60 });
    await seedHistory(db.driver, { tag: 'old-published', at: new Date(now - 40 * day), outbox: 100 });
    await seedHistory(db.driver, {
      tag: 'old-pending',
      at: new Date(now - 40 * day),
      outbox: 10,
      outboxStatus: 'Pending',
    });
    before = await countHistoryByTag(db.driver);
  });
  afterAll(async () => {
    await db.close();
  });

  it('refuses a bad age with a usage error naming the option, and deletes nothing', async () => {
    // Without the default --older-than 30d: a second --older-than is refused as given twice (ADR 0110).
    const r = await prune(url, ['--older-than', '30 days'], cliPrune);
    expect(r.code).toBe(64);
    expect(r.err).toMatch(/--older-than must be an age/);
    const b = await prune(url, ['--batch-size', '0']);
    expect(b.code).toBe(64);
    expect(b.err).toMatch(/--batch-size must be a whole number/);
    expect(await countHistoryByTag(db.driver)).toEqual(before);
  });

  it('--dry-run prints the counts per table and deletes nothing', async () => {
    const r = await prune(url, ['--dry-run']);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out) as { dryRun: boolean; rows: Record<string, number> };
    expect(report.dryRun).toBe(true);
    expect(report.rows).toMatchObject({
      flow_runs: 6000,
      action_runs: 30_000,
      flow_events: 42_000,
      process_transitions: 150,
      outbox: 100,
      inbox: 60,
    });
    expect(await countHistoryByTag(db.driver)).toEqual(before);
  });

  it('a SIGKILL after the first progress line leaves every run whole or gone; a rerun deletes the rest', async () => {
    const line = await pruneKilledAfterFirstBatch(url);
    expect(line).toMatch(/^prune: runs batch 1: \d+ rows done, \d+ left, \d+ rows\/s$/);

    const mid = await countHistoryByTag(db.driver);
    expect(await countOrphanRows(db.driver)).toBe(0);
    const left = mid['flow_runs:old-done'] ?? 0;
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThan(6000);
    // Each surviving run still has all five steps and seven events.
    expect(mid['action_runs:old-done']).toBe(left * 5);
    expect(mid['flow_events:old-done']).toBe(left * 7);
    for (const keep of ['old-open', 'new-done'])
      expect([mid[`flow_runs:${keep}`], mid[`action_runs:${keep}`]]).toEqual([
        before[`flow_runs:${keep}`],
        before[`action_runs:${keep}`],
      ]);

    const rerun = await prune(url, ['--batch-size', '500']);
    expect(rerun.code).toBe(0);
    expect(rerun.err).toMatch(/^prune: inbox batch \d+: \d+ rows done, 0 left, \d+ rows\/s$/m);
    const report = JSON.parse(rerun.out) as { deleted: Record<string, number>; complete: boolean };
    expect(report.complete).toBe(true);
    expect(report.deleted.flow_runs).toBe(left);

    const after = await countHistoryByTag(db.driver);
    expect(await countOrphanRows(db.driver)).toBe(0);
    const expected = { ...before };
    for (const gone of [
      'flow_runs:old-done',
      'action_runs:old-done',
      'flow_events:old-done',
      'process_transitions:old-instance',
      'inbox:old-instance',
      'outbox:old-published',
    ])
      delete expected[gone];
    expect(after).toEqual(expected);
  });
});
