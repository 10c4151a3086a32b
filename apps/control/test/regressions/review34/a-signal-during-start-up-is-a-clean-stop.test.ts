import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { testPassword } from '../../support/test-plane.ts';
import { controlProcess, until } from './control-process.ts';

// README "One process owns the embedded database": "A clean stop (SIGINT/SIGTERM, `db.close()`)
// releases the lock at once." `npm start` relies on its control plane ending with an exit code: its
// wait for the control plane (scripts/start.mjs, waitForHttp) only gives up early on
// `child.exitCode !== null`, which a death by signal never sets, so a Ctrl-C during start-up leaves
// it polling for its whole 120 s. A signal that arrives while the control plane migrates must stop
// it like one that arrives later: an exit code, the lock released.
describe('review 34: SIGTERM or SIGINT while the control plane is still starting', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s while it migrates a fresh data directory: it exits with a code (not by the signal) and releases the lock',
    async (signal) => {
      const dataDir = join(mkdtempSync(join(tmpdir(), 'sagaflow-r34-early-')), 'pglite');
      const plane = controlProcess({
        CONTROL_PORT: '0',
        SAGAFLOW_DATA_DIR: dataDir,
        SAGAFLOW_ADMIN_PASSWORD: testPassword,
        LOG_LEVEL: 'debug',
      });
      // Progress, not time: the lock is taken and a migration has begun applying.
      await until(async () => (/"status":"applying"/.test(plane.output()) ? true : undefined));
      plane.child.kill(signal);
      const exit = await plane.exited;
      expect(exit.out, 'the signal landed during start-up').not.toContain('control plane listening');
      expect({ signal: exit.signal, exitedWithACode: exit.code !== null }).toEqual({
        signal: null,
        exitedWithACode: true,
      });
      expect(existsSync(join(dataDir, 'sagaflow.lock')), 'the lock is released').toBe(false);
    },
    300_000,
  );
});
