import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { migratedDataDir } from '../../support/migrated-data-dir.ts';
import { testPassword } from '../../support/test-plane.ts';
import { controlProcess, within } from './control-process.ts';

// ADR 0014 (Decision, "A lost lock stops the holder"); README: "A holder that loses its lock while
// running (someone deleted it, …) stops: it must not write to a directory another process has opened."
// The holder refreshes every 5 s, so it must be gone well within 30 s.
describe('review 34: the data directory lock deleted under a running control plane', () => {
  it('held: the control plane stops (exit 1, naming the lost lock) within one refresh or so', async () => {
    // A copy of a migrated directory (made once per process): a first start's initdb is not under test.
    const dataDir = await migratedDataDir('r34-lost');
    const plane = controlProcess({
      CONTROL_PORT: '0',
      SAGAFLOW_DATA_DIR: dataDir,
      SAGAFLOW_ADMIN_PASSWORD: testPassword,
    });
    await plane.listening;
    rmSync(join(dataDir, 'sagaflow.lock'), { recursive: true });
    const exit = await within(plane.exited, 30_000);
    if (!exit) plane.child.kill('SIGKILL');
    expect(exit?.code).toBe(1);
    expect(exit?.err).toContain('lost the lock on data directory');
  }, 180_000);
});
