import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { apiClient, createTestOperator, signInCookie, testDatabaseUrl } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';
import { runCli } from '../../support/run-cli.ts';

const cli = runCli;

/**
 * ADR 0021: exit 3 is "unauthenticated or forbidden: no token, a refused token", exit 1 "the control
 * plane unreachable". `token list` prints a token's hint as `sgf_AbCd1234…`; pasting that (or a token
 * with a character no HTTP header can carry) into SAGAFLOW_TOKEN is a wrong token, not an outage.
 */
describe('the CLI with a SAGAFLOW_TOKEN no HTTP header can carry', () => {
  let plane: ControlPlane;
  let hint = '';
  beforeAll(async () => {
    const url = await testDatabaseUrl('r31_cli_bad_token');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    const cookie = await signInCookie(plane.url, await createTestOperator(plane, 'viewer'));
    hint = (await apiClient(plane.url, cookie).tokens.create.mutate({ name: 'cli' })).hint;
  });
  afterAll(async () => {
    await plane.stop();
  });

  it.each([
    ['the hint as `token list` prints it', () => `${hint}…`],
    ['a token broken across two lines', () => `${hint}\nrest-of-it`],
  ])('%s: exit 3 saying the token is not usable, not "cannot reach the control plane"', async (_label, token) => {
    const r = await cli(['runs', 'list'], { SAGAFLOW_URL: plane.url, SAGAFLOW_TOKEN: token() });
    expect({ code: r.code, unreachable: /cannot reach the control plane/.test(r.err) }, r.err).toEqual({
      code: 3,
      unreachable: false,
    });
  });
});
