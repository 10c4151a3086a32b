import { existsSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { testPassword } from '../../support/test-plane.ts';
import { controlProcess } from './control-process.ts';

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

// apps/control/src/env.ts (parseEnv): "on a bad value throws a message that names the variable";
// start-control-plane.ts: "Checks run in the order that keeps a failed start from leaving anything
// half-created" (apps/control/test/control-startup.test.ts holds it for a busy port: "leaves no data
// directory behind"). A CONTROL_HOST this machine cannot listen on is a bad CONTROL_HOST: the message
// must name it (not send the operator after CONTROL_PORT), before any database is created.
describe('review 34: a CONTROL_HOST the machine cannot listen on', () => {
  it.each([
    ['a name that does not resolve', 'no-such-host.invalid'],
    ['an address that is not this machine’s', '192.0.2.1'],
  ])(
    '%s, with a fixed port: exit 1 naming CONTROL_HOST',
    async (_, host) => {
      const dataDir = join(mkdtempSync(join(tmpdir(), 'sagaflow-r34-host-')), 'pglite');
      const plane = controlProcess({
        CONTROL_HOST: host,
        CONTROL_PORT: String(await freePort()),
        SAGAFLOW_DATA_DIR: dataDir,
        SAGAFLOW_ADMIN_PASSWORD: testPassword,
        SAGAFLOW_ALLOWED_HOSTS: host,
      });
      const exit = await plane.exited;
      expect(exit.code).toBe(1);
      expect(exit.err).toContain('CONTROL_HOST');
      expect(existsSync(dataDir)).toBe(false);
    },
    120_000,
  );

  it('a name that does not resolve, with CONTROL_PORT=0: exit 1 naming CONTROL_HOST, before a data directory or a first admin is created', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'sagaflow-r34-host0-')), 'pglite');
    const plane = controlProcess({
      CONTROL_HOST: 'no-such-host.invalid',
      CONTROL_PORT: '0',
      SAGAFLOW_DATA_DIR: dataDir,
      SAGAFLOW_ALLOWED_HOSTS: 'no-such-host.invalid',
    });
    const exit = await plane.exited;
    expect(exit.code).toBe(1);
    expect(exit.err).toContain('CONTROL_HOST');
    expect(exit.out, 'a first admin password printed by a start that then failed').not.toContain('First admin created');
    expect(existsSync(dataDir)).toBe(false);
  }, 120_000);
});
