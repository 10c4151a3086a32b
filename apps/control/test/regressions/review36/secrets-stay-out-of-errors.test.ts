import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { createTestOperator, testDatabaseUrl, testPassword } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';
import { runCli } from '../../support/run-cli.ts';

/**
 * ADR 0021: the token "is returned once by tokens.create and never stored, logged or audited"; the engine
 * masks a DATABASE_URL's password before it prints one (packages/engine/src/db/create-database.ts:251-254,
 * `postgresql://x:***@…`, as `monitor sweep` shows it). SAGAFLOW_URL is "the control plane http(s) URL"
 * (cli-settings.ts:10); a deployment behind a proxy with basic auth writes it as https://user:password@host.
 * Whatever the CLI does with such a URL, an error it prints (to a terminal, a CI log) must not carry the password.
 */
describe('a SAGAFLOW_URL holding a password', () => {
  it('an error naming the control plane does not print the password', async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const { port } = s.address() as { port: number };
    await new Promise<void>((r) => s.close(() => r()));
    const r = await runCli(['runs', 'list', '--json'], {
      SAGAFLOW_URL: `http://ops:hunter2-proxy-secret@127.0.0.1:${port}`,
      SAGAFLOW_TOKEN: `sgf_${'B'.repeat(43)}`,
    });
    expect(r.code).toBe(1);
    expect(r.out + r.err).not.toContain('hunter2-proxy-secret');
    expect(r.out + r.err).not.toContain('B'.repeat(20));
  });
});

describe('passwords and tokens given to the CLI (held)', () => {
  let plane: ControlPlane;
  let admin = '';
  beforeAll(async () => {
    const url = await testDatabaseUrl('r36_secrets');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    admin = await createTestOperator(plane, 'admin');
  });
  afterAll(async () => {
    await plane.stop();
  });

  it('a wrong password with --sign-in is exit 3 and never printed; the right one prints the token once', async () => {
    const env = { SAGAFLOW_URL: plane.url };
    const wrong = await runCli(
      ['token', 'create', '--name', 'laptop', '--sign-in', admin, '--password-stdin', '--json'],
      env,
      'not-the-password-at-all\n',
    );
    expect(wrong.code).toBe(3);
    expect(wrong.out + wrong.err).not.toContain('not-the-password-at-all');
    expect(JSON.parse(wrong.out)).toMatchObject({ error: { exitCode: 3 } });
    const right = await runCli(
      ['token', 'create', '--name', 'laptop', '--sign-in', admin, '--password-stdin'],
      env,
      `${testPassword}\n`,
    );
    expect(right.code).toBe(0);
    const made = /sgf_[A-Za-z0-9_-]{43}/.exec(right.out)?.[0] ?? '';
    expect(made).not.toBe('');
    expect(right.err).not.toContain(made);
    expect(right.out).not.toContain(testPassword);
    // create-operator reads its password from stdin and prints neither it nor the caller's token.
    const created = await runCli(
      ['create-operator', 'r36-new-op', '--role', 'viewer', '--password-stdin', '--json'],
      { ...env, SAGAFLOW_TOKEN: made },
      'a-long-enough-password-1\n',
    );
    expect(created.code, created.err).toBe(0);
    expect(created.out + created.err).not.toContain('a-long-enough-password-1');
    expect(created.out + created.err).not.toContain(made);
  });
});
