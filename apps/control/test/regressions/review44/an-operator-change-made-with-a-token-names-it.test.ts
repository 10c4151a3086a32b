import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import { apiClient, createTestOperator, signInCookie, testDatabaseUrl } from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';
import { runCli as cli } from '../../support/run-cli.ts';

/**
 * ADR 0105 (6, 10): every operator action writes a trail row "naming the operator, and the token when
 * one was used"; ADR 0111: "every operator action made with a token" records `via` and
 * `tokenCreatedBy`, because an admin may create a token in any operator's name and get its secret.
 * `sagaflow reset-password <name>` and `sagaflow operator disable <name>` (ADR 0114 and its session 39
 * addendum) always go over HTTP with a token. Here admin `maker` creates a token in admin `holder`'s
 * name and uses it: the trail must show that it was that token, made by `maker`, not `holder`'s session.
 */
describe('an operator change made from the CLI with an API token is on the trail with its token', () => {
  let plane: ControlPlane;
  const names = { maker: '', holder: '', target: '' };
  let env: Record<string, string>;
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({ DATABASE_URL: await testDatabaseUrl('r44_audit_token'), CONTROL_PORT: '0', LOG_LEVEL: 'silent' }),
    );
    names.maker = await createTestOperator(plane, 'admin');
    names.holder = await createTestOperator(plane, 'admin');
    names.target = await createTestOperator(plane, 'operator');
    const maker = apiClient(plane.url, await signInCookie(plane.url, names.maker));
    const { token } = await maker.tokens.create.mutate({ name: 'made-for-holder', operator: names.holder });
    env = { SAGAFLOW_URL: plane.url, SAGAFLOW_TOKEN: token };
  });
  afterAll(async () => {
    await plane?.stop();
  });

  const rowOf = (action: string) =>
    plane.db.prisma.auditEvent.findFirstOrThrow({
      where: { action, target_id: names.target },
      select: { actor: true, details: true },
    });

  it('DEFECT: reset-password’s operator_password_reset row names the token and who created it', async () => {
    const reset = await cli(['reset-password', names.target, '--password-stdin'], env, 'a password set by token\n');
    expect(reset.code, reset.err).toBe(0);
    expect(await rowOf('operator_password_reset')).toMatchObject({
      actor: names.holder,
      details: { via: expect.stringContaining('made-for-holder') as string, tokenCreatedBy: names.maker },
    });
  });

  it('DEFECT: operator disable’s operator_disabled row names the token and who created it', async () => {
    const disabled = await cli(['operator', 'disable', names.target], env);
    expect(disabled.code, disabled.err).toBe(0);
    expect(await rowOf('operator_disabled')).toMatchObject({
      actor: names.holder,
      details: { via: expect.stringContaining('made-for-holder') as string, tokenCreatedBy: names.maker },
    });
  });
});
