import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { rawCall, signInCookie, testDatabaseUrl } from '../../support/test-plane.ts';
import { appRouter } from '../../../src/api/app-router.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';

/**
 * On a fresh database the control plane generates the first admin's password and prints it on stdout
 * (which a container platform keeps in its logs), and its log line says "sign in and change it"
 * (start-control-plane.ts:66). Nothing in the API or the CLI changes a password (ADR 0015 leaves it
 * out), so the printed secret stays valid for as long as the account exists. The operator must be
 * able to do what it is told: change its own password, which should end its other sessions.
 */
describe('review 37: the generated first-admin password can be changed as the log says', () => {
  let plane: ControlPlane;
  const printed: string[] = [];
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({ DATABASE_URL: await testDatabaseUrl('r37_first_admin'), CONTROL_PORT: '0', LOG_LEVEL: 'silent' }),
      undefined,
      { print: (text) => printed.push(text) },
    );
  });
  afterAll(async () => {
    await plane.stop();
  });

  it('the printed password signs in, and the API offers the signed-in admin a way to change it', async () => {
    const password = /with password: (\S+)/.exec(printed.join(''))?.[1] ?? '';
    expect(password).not.toBe('');
    const cookie = await signInCookie(plane.url, 'admin', password);
    expect((await rawCall(plane.url, 'auth.me', { cookie })).status).toBe(200);
    const passwordProcedures = Object.keys(appRouter._def.procedures).filter((p) => /password/i.test(p));
    expect(passwordProcedures, 'procedures that change a password').not.toEqual([]);
  });
});
