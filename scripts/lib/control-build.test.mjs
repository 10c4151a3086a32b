import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { controlNodeFlags, controlProcessEnv } from './control-build.mjs';

/** The old-space limit V8 reports in a node started with `flags`, in MB. */
const oldSpaceLimitMb = (flags) => {
  const r = spawnSync(
    process.execPath,
    [...flags, '-e', 'process.stdout.write(String(require("v8").getHeapStatistics().heap_size_limit))'],
    { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } },
  );
  return Number(r.stdout) / 1048576;
};

describe("the control plane's node flags (ADR 0044)", () => {
  it('cap its old space at 1 GB by default, and the cap reaches V8', () => {
    const flags = controlNodeFlags({});
    expect(flags).toEqual(['--max-old-space-size=1024']);
    // The limit is the old space plus the young generation: above 1024, far below the machine's default.
    const limit = oldSpaceLimitMb(flags);
    expect(limit).toBeGreaterThanOrEqual(1024);
    expect(limit).toBeLessThan(1200);
  });

  it('take the cap from SAGAFLOW_CONTROL_MAX_OLD_SPACE_MB', () => {
    expect(controlNodeFlags({ SAGAFLOW_CONTROL_MAX_OLD_SPACE_MB: '2048' })).toEqual(['--max-old-space-size=2048']);
  });

  it.each(['', 'lots', '1e3', '-512', '100', '70000', '512.5'])('refuse %j naming the setting', (value) => {
    expect(() => controlNodeFlags({ SAGAFLOW_CONTROL_MAX_OLD_SPACE_MB: value })).toThrow(
      /^SAGAFLOW_CONTROL_MAX_OLD_SPACE_MB must be a whole number of MB from 256 to 65536, got "/,
    );
  });

  it("cap glibc's malloc arenas at 2 unless MALLOC_ARENA_MAX is set", () => {
    expect(controlProcessEnv({})).toEqual({ MALLOC_ARENA_MAX: '2' });
    expect(controlProcessEnv({ MALLOC_ARENA_MAX: '8' })).toEqual({ MALLOC_ARENA_MAX: '8' });
  });
});
