import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fromRoot, unhandledErrorFailures } from './unhandled-errors.mjs';

const root = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'sagaflow-unhandled-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('errors no test awaited are named at the end of npm test', () => {
  it('a real vitest run records the rejection a passing test left, with its file and test, and still fails', () => {
    const file = join(dir, 'unhandled.jsonl');
    const run = spawnSync(
      join(root, 'node_modules', '.bin', 'vitest'),
      ['run', '--config', join(import.meta.dirname, 'fixtures', 'leaves-a-rejection.config.mjs')],
      { cwd: root, encoding: 'utf8', env: { ...process.env, SAGAFLOW_VITEST_UNHANDLED: file } },
    );
    expect(run.status, run.stdout + run.stderr).not.toBe(0);
    const failures = unhandledErrorFailures(file, root);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(
      /^vitest unhandled Unhandled Rejection while scripts\/lib\/fixtures\/leaves-a-rejection\.fixture\.mjs › passes, leaving a rejection no one awaits ran: Error: left behind on purpose\n/,
    );
    expect(failures[0]).toContain('leaves-a-rejection.fixture.mjs:5');
    // A vitest of its own starting cold: on a loaded 2-core machine that alone can take many seconds.
  }, 120_000);

  it('no file, no failures', () => {
    expect(unhandledErrorFailures(join(dir, 'never-written.jsonl'), root)).toEqual([]);
  });

  it('paths are shown from the root only when they lie under it', () => {
    expect(fromRoot('/repo/a/b.ts', '/repo')).toBe('a/b.ts');
    expect(fromRoot('/repository/b.ts', '/repo')).toBe('/repository/b.ts');
  });
});
