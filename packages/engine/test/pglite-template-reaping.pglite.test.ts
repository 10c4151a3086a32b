import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { reapStalePgliteTemplates, templatesPrefix } from './support/reap-stale-pglite-templates.ts';

const bases: string[] = [];
afterEach(() => {
  for (const b of bases.splice(0)) rmSync(b, { recursive: true, force: true });
});

/** A template directory in `base` as a run leaves it, owned by `pid` (none: no owner file). */
function templatesDir(base: string, name: string, pid?: number): string {
  const dir = join(base, name);
  mkdirSync(join(dir, 'migrated'), { recursive: true });
  writeFileSync(join(dir, 'migrated', 'PG_VERSION'), '15');
  if (pid !== undefined) writeFileSync(join(dir, 'run.pid'), String(pid));
  return dir;
}

describe('reapStalePgliteTemplates', () => {
  it("deletes the template directories of runs that are gone and keeps a live run's and one being made", () => {
    const base = mkdtempSync(join(tmpdir(), 'reap-test-'));
    bases.push(base);
    // A process that has exited: its pid is free (and not reused this quickly on these machines).
    const gone = spawnSync(process.execPath, ['-e', '0']).pid;
    const killedRun = templatesDir(base, `${templatesPrefix}killed`, gone);
    const liveRun = templatesDir(base, `${templatesPrefix}live`, process.pid);
    const beingMade = templatesDir(base, `${templatesPrefix}new`);
    const oldUnowned = templatesDir(base, `${templatesPrefix}old`);
    const sevenHoursAgo = new Date(Date.now() - 7 * 3_600_000);
    utimesSync(oldUnowned, sevenHoursAgo, sevenHoursAgo);
    const notOurs = templatesDir(base, 'something-else', gone);

    const reaped = reapStalePgliteTemplates(base);

    expect(reaped.sort()).toEqual([killedRun, oldUnowned].sort());
    expect(existsSync(killedRun)).toBe(false);
    expect(existsSync(oldUnowned)).toBe(false);
    expect(existsSync(liveRun)).toBe(true);
    expect(existsSync(beingMade)).toBe(true);
    expect(existsSync(notOurs)).toBe(true);
  });

  it('does nothing where the base directory does not exist', () => {
    expect(reapStalePgliteTemplates(join(tmpdir(), 'no-such-base-dir-for-reaping'))).toEqual([]);
  });
});
