import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createDatabase as createPgDatabase, uniqueDatabaseName } from '@sagaflow/test-postgres';
import { describe, expect, inject, it } from 'vitest';
import '../../provided-context.ts';
import { migratedDataDir } from '../../support/migrated-data-dir.ts';
import { testPassword } from '../../support/test-plane.ts';
import { runCli as cli } from '../../support/run-cli.ts';
import { controlEntry } from '../../support/compiled-control.ts';

const root = fileURLToPath(new URL('../../../../../', import.meta.url));
const newPassword = 'review44 break the glass';

/**
 * ADR 0114: `reset-password <name> --local` opens the database itself, "refused while a control plane
 * holds an embedded one", and, like the other local commands, on a database not migrated for this
 * version (review 36). The new password is never echoed back: not on stdout, stderr or in --json.
 * Until now only the DATABASE_URL path of --local was tested.
 */
describe('reset-password --local refuses a held data directory and an unmigrated database', () => {
  it('an unmigrated database: exit 1 naming the setting, nothing written, the password nowhere in the output', async () => {
    const url = await createPgDatabase(inject('pgAdminUrl'), uniqueDatabaseName('r44_unmigrated'));
    const reset = await cli(
      ['reset-password', 'admin', '--local', '--password-stdin', '--json'],
      { DATABASE_URL: url },
      `${newPassword}\n`,
    );
    expect(reset.code, reset.err).toBe(1);
    expect(reset.err).toContain('DATABASE_URL');
    expect(reset.err).toContain('not migrated');
    expect(reset.out + reset.err).not.toContain(newPassword);
  });

  it('a data directory a control plane holds: exit 1 naming its pid, the password unchanged; once it stops, a name in odd case is reset', async () => {
    // A copy of a migrated directory (made once per process): a first start's initdb is not under test.
    const dataDir = await migratedDataDir('r44');
    const plane = spawn(process.execPath, controlEntry('main', 'build'), {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        LOG_LEVEL: 'info',
        CONTROL_PORT: '0',
        SAGAFLOW_DATA_DIR: dataDir,
        SAGAFLOW_ADMIN_PASSWORD: testPassword,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((r) => plane.once('exit', (code) => r(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let buffered = '';
        plane.stdout.on('data', (d: Buffer) => {
          buffered += d.toString();
          const m = /"url":"(http:\/\/[^"]+)","msg":"control plane listening"/.exec(buffered);
          if (m?.[1]) resolve(m[1]);
        });
        void exited.then((c) => reject(new Error(`control plane exited (${c})`)));
      });
      const signIn = (password: string) =>
        fetch(`${url}/trpc/auth.signIn`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'admin', password }),
        }).then((r) => r.status);

      const held = await cli(
        ['reset-password', 'admin', '--local', '--password-stdin', '--json'],
        { SAGAFLOW_DATA_DIR: dataDir },
        `${newPassword}\n`,
      );
      expect(held.code, held.err).toBe(1);
      expect(held.err).toContain(`pid ${plane.pid}`);
      expect(held.out + held.err).not.toContain(newPassword);
      expect(await signIn(testPassword)).toBe(200);
      expect(await signIn(newPassword)).toBe(401);
    } finally {
      plane.kill('SIGTERM');
    }
    expect(await exited).toBe(0);

    const freed = await cli(
      ['reset-password', '  ADMIN ', '--local', '--password-stdin', '--json'],
      { SAGAFLOW_DATA_DIR: dataDir },
      `${newPassword}\n`,
    );
    expect(freed.code, freed.err).toBe(0);
    expect(JSON.parse(freed.out)).toMatchObject({ name: 'admin', local: true, disabled: false });
    expect(freed.out + freed.err).not.toContain(newPassword);
  }, 600_000);
});
