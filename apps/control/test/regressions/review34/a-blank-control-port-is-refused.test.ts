import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEnv } from '../../../src/env.ts';
import { testPassword } from '../../support/test-plane.ts';
import { controlProcess } from './control-process.ts';

// README's settings table: `CONTROL_HOST` / `CONTROL_PORT` default `127.0.0.1` / `4000`, "the control
// plane's HTTP address"; env.ts: "on a bad value throws a message that names the variable". A blank
// value (`CONTROL_PORT=` in a compose file or a .env, or a stray space) is neither the default nor a
// port: it must be refused, naming CONTROL_PORT. `npm start` itself refuses it ("must be a port
// number between 1 and 65535", scripts/start.mjs assertFree).
describe('review 34: a blank CONTROL_PORT', () => {
  it.each(['', ' '])('parseEnv refuses CONTROL_PORT=%j naming the variable', (value) => {
    expect(() => parseEnv({ CONTROL_PORT: value })).toThrow(/CONTROL_PORT/);
  });

  it('the control plane exits 1 naming CONTROL_PORT instead of listening on a port nobody asked for', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'sagaflow-r34-port-')), 'pglite');
    const plane = controlProcess({
      CONTROL_PORT: '',
      SAGAFLOW_DATA_DIR: dataDir,
      SAGAFLOW_ADMIN_PASSWORD: testPassword,
    });
    const listened = await Promise.race([plane.listening.then((u) => u), plane.exited.then(() => null)]);
    if (listened) plane.child.kill('SIGTERM');
    const exit = await plane.exited;
    expect(listened, `it started, listening at ${listened}`).toBeNull();
    expect(exit.code).toBe(1);
    expect(exit.err).toMatch(/^sagaflow control: invalid setting CONTROL_PORT/);
  }, 180_000);
});
