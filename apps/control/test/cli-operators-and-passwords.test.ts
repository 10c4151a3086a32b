import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import {
  apiClient,
  createTestOperator,
  rawCall,
  signInCookie,
  testDatabaseUrl,
  testPassword,
} from './support/test-plane.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';
import { runCli as cli } from './support/run-cli.ts';

/**
 * Passwords from the CLI (ADR 0114): `passwd` (your own, the current one checked), `reset-password`
 * (an admin, for another operator) and `reset-password --local` (break-glass on the database itself).
 * The real CLI as a child process against a real control plane on PostgreSQL; every answer is checked
 * by signing in over HTTP and in the audit trail.
 */
describe('operators and passwords from the CLI: passwd, an admin reset, the local break-glass reset, roles and disabling', () => {
  let plane: ControlPlane;
  let databaseUrl: string;
  const names = { admin: '', ana: '', ben: '' };
  const tokens = { admin: '', ana: '' };
  beforeAll(async () => {
    databaseUrl = await testDatabaseUrl('cli_passwords');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: databaseUrl, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    names.admin = await createTestOperator(plane, 'admin');
    names.ana = await createTestOperator(plane, 'operator');
    names.ben = await createTestOperator(plane, 'operator');
    for (const who of ['admin', 'ana'] as const) {
      const cookie = await signInCookie(plane.url, names[who]);
      tokens[who] = (await apiClient(plane.url, cookie).tokens.create.mutate({ name: `${who}-cli` })).token;
    }
  });
  afterAll(async () => {
    await plane?.stop();
  });

  const envOf = (who: 'admin' | 'ana') => ({ SAGAFLOW_URL: plane.url, SAGAFLOW_TOKEN: tokens[who] });
  /** The HTTP status of a sign-in with this name and password: 200 signed in, 401 refused. */
  const signInStatus = async (name: string, password: string) =>
    (await rawCall(plane.url, 'auth.signIn', { type: 'mutation', input: { name, password } })).status;
  /** Whether a session cookie still signs its operator in. */
  const sessionAlive = async (cookie: string) => (await rawCall(plane.url, 'auth.me', { cookie })).status === 200;
  const trail = (target: string) =>
    plane.db.prisma.auditEvent.findMany({
      where: { action: 'operator_password_reset', target_id: target },
      select: { actor: true, actor_id: true, outcome: true, details: true },
    });

  it('passwd: a wrong current password changes nothing; the right one sets the new one and ends sessions, tokens stay', async () => {
    const session = await signInCookie(plane.url, names.ana);
    const wrong = await cli(['passwd', '--password-stdin'], envOf('ana'), 'not my password\nbrand new password 1\n');
    expect(wrong.code, wrong.out).toBe(3);
    expect(wrong.err).toContain('the current password is wrong');
    expect(await signInStatus(names.ana, testPassword)).toBe(200);

    const short = await cli(['passwd', '--password-stdin'], envOf('ana'), `${testPassword}\nshort\n`);
    expect(short.code).toBe(64);
    expect(short.err).toContain('at least 12 characters');
    const oneLine = await cli(['passwd', '--password-stdin'], envOf('ana'), `${testPassword}\n`);
    expect(oneLine.code).toBe(64);
    expect(oneLine.err).toContain('the new one on its second');
    expect(await signInStatus(names.ana, testPassword)).toBe(200);

    const changed = await cli(['passwd', '--password-stdin'], envOf('ana'), `${testPassword}\nanother horse battery\n`);
    expect(changed.code, changed.err).toBe(0);
    expect(changed.out).toContain('password changed');
    expect(await sessionAlive(session)).toBe(false);
    expect(await signInStatus(names.ana, testPassword)).toBe(401);
    expect(await signInStatus(names.ana, 'another horse battery')).toBe(200);
    // The token it was changed with still works.
    expect((await cli(['whoami'], envOf('ana'))).code).toBe(0);
  });

  it('reset-password: an admin sets another operator’s password and ends their sessions, audited; not an operator, not oneself', async () => {
    const bensSession = await signInCookie(plane.url, names.ben);
    const byOperator = await cli(
      ['reset-password', names.ben, '--password-stdin'],
      envOf('ana'),
      'a new one for ben\n',
    );
    expect(byOperator.code).toBe(3);
    expect(await sessionAlive(bensSession)).toBe(true);

    const self = await cli(['reset-password', names.admin, '--password-stdin'], envOf('admin'), 'a new one for me!\n');
    expect(self.code).toBe(64);
    expect(self.err).toContain('input.name: that is you');
    expect(await signInStatus(names.admin, testPassword)).toBe(200);

    const unknown = await cli(
      ['reset-password', 'nobody-here', '--password-stdin'],
      envOf('admin'),
      'a new one, nobody\n',
    );
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('no operator named nobody-here');

    const reset = await cli(['reset-password', names.ben, '--password-stdin'], envOf('admin'), 'a new one for ben\n');
    expect(reset.code, reset.err).toBe(0);
    expect(reset.out).toContain(`password of ${names.ben} reset; 1 session ended`);
    expect(await sessionAlive(bensSession)).toBe(false);
    expect(await signInStatus(names.ben, testPassword)).toBe(401);
    expect(await signInStatus(names.ben, 'a new one for ben')).toBe(200);
    expect(await trail(names.ben)).toEqual([
      {
        actor: names.admin,
        actor_id: expect.any(String) as string,
        outcome: 'succeeded',
        // Made with the admin's token: the row names it and who created it (review 44, ADR 0111).
        details: {
          sessionsEnded: 1,
          via: expect.stringContaining('admin-cli') as string,
          tokenCreatedBy: names.admin,
        },
      },
    ]);
  });

  it('reset-password --local: no token and no admin needed, on the database itself; on the trail as local', async () => {
    const adminSession = await signInCookie(plane.url, names.admin);
    const env = { DATABASE_URL: databaseUrl };
    const missing = await cli(
      ['reset-password', 'nobody-here', '--local', '--password-stdin'],
      env,
      'break the glass\n',
    );
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('no operator named nobody-here; nothing was changed');

    const adminRow = await plane.db.prisma.operator.findUniqueOrThrow({ where: { name: names.admin } });
    const open = await plane.db.prisma.session.count({ where: { operator_id: adminRow.id } });
    expect(open).toBeGreaterThan(0);
    const reset = await cli(['reset-password', names.admin, '--local', '--password-stdin'], env, 'break the glass\n');
    expect(reset.code, reset.err).toBe(0);
    expect(reset.out).toContain(`(locally, on the database itself); ${open} sessions ended`);
    expect(await sessionAlive(adminSession)).toBe(false);
    expect(await signInStatus(names.admin, 'break the glass')).toBe(200);
    const rows = await trail(names.admin);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      actor_id: null,
      outcome: 'succeeded',
      details: { via: 'local', sessionsEnded: open },
    });
    expect(rows[0]!.actor).toMatch(/^local:.+/);
  });

  it('operators list, set-role, disable and enable: admin only, each audited, never on oneself', async () => {
    const listed = await cli(['operators', 'list'], envOf('admin'));
    expect(listed.code, listed.err).toBe(0);
    expect(listed.out).toMatch(new RegExp(`${names.ben}\\s+.*\\s+operator\\s+enabled`));
    expect((await cli(['operators', 'list'], envOf('ana'))).code).toBe(3);

    const bad = await cli(['operator', 'set-role', names.ben, 'superuser'], envOf('admin'));
    expect(bad.code).toBe(64);
    expect(bad.err).toContain('viewer|operator|admin');
    const demoted = await cli(['operator', 'set-role', names.ben, 'viewer'], envOf('admin'));
    expect(demoted.code, demoted.err).toBe(0);
    expect(demoted.out).toContain(`${names.ben} is viewer now`);
    expect((await plane.db.prisma.operator.findUniqueOrThrow({ where: { name: names.ben } })).role).toBe('viewer');
    expect(
      await plane.db.prisma.auditEvent.count({ where: { action: 'operator_role_changed', target_id: names.ben } }),
    ).toBe(1);

    const bensSession = await signInCookie(plane.url, names.ben, 'a new one for ben');
    const disabled = await cli(['operator', 'disable', names.ben], envOf('admin'));
    expect(disabled.code, disabled.err).toBe(0);
    expect(await sessionAlive(bensSession)).toBe(false);
    expect(await signInStatus(names.ben, 'a new one for ben')).toBe(401);
    const enabled = await cli(['operator', 'enable', names.ben], envOf('admin'));
    expect(enabled.code, enabled.err).toBe(0);
    expect(await signInStatus(names.ben, 'a new one for ben')).toBe(200);

    const self = await cli(['operator', 'disable', names.admin], envOf('admin'));
    expect(self.code).toBe(1);
    expect(self.err).toContain('cannot change or disable itself');
    expect((await cli(['operator', 'set-role', names.ana, 'admin'], envOf('ana'))).code).toBe(3);
    expect((await plane.db.prisma.operator.findUniqueOrThrow({ where: { name: names.ana } })).role).toBe('operator');
  });

  it('without a terminal or --password-stdin the password is not guessed: 64, nothing changed', async () => {
    const r = await cli(['reset-password', names.ben], envOf('admin'));
    expect(r.code).toBe(64);
    expect(r.err).toContain('--password-stdin');
    expect(await signInStatus(names.ben, 'a new one for ben')).toBe(200);
  });
});
