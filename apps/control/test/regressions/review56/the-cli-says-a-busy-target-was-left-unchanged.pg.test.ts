import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import {
  apiClient,
  createTestOperator,
  signInCookie,
  startWaitingRun,
  testDatabaseUrl,
} from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';
import { runCli } from '../../support/run-cli.ts';

/**
 * Review 56 (ADR 0132 §1, Consequences). A repair whose run another session holds gives up at half
 * of `processes.transaction_timeout_ms` and answers `target_busy`: 409 over the API, exit 1 from the
 * CLI ("an error, nothing changed"), the message saying nothing changed and to send it again. The
 * guarantee is the operator's at 3 a.m.: the CLI ends (it does not hang on the row), says the target
 * was busy and unchanged, with a status a script can tell from a refusal (2) and from success, and
 * the same command goes through once the row is let go.
 */
describe('review 56: the CLI on a repair whose target another session holds (PostgreSQL)', () => {
  let plane: ControlPlane;
  let cookie = '';
  let token = '';
  let release: () => void = () => undefined;
  let holding: Promise<unknown> = Promise.resolve();
  beforeAll(async () => {
    plane = await startControlPlane(
      parseEnv({ DATABASE_URL: await testDatabaseUrl('r56_cli_busy'), CONTROL_PORT: '0', LOG_LEVEL: 'silent' }),
    );
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'operator'));
    token = (await apiClient(plane.url, cookie).tokens.create.mutate({ name: 'cli' })).token;
  });
  afterAll(async () => {
    release();
    await holding.catch(() => undefined);
    await plane?.stop();
  });

  it('a kick of a held run exits 1 saying the run was busy and unchanged, with --json too, and is not busy once let go', async () => {
    const runId = await startWaitingRun(plane, cookie);
    // Another session keeps the run's row (an operator's psql, a host's open transaction).
    let held!: () => void;
    const isHeld = new Promise<void>((r) => (held = r));
    const letGo = new Promise<void>((r) => (release = r));
    holding = plane.db.prisma.$transaction(
      async (tx) => {
        await tx.$queryRaw`select id from "sagaflow"."flow_runs" where id = ${runId}::uuid for update`;
        held();
        await letGo;
      },
      { timeout: 110_000, maxWait: 10_000 },
    );
    await isHeld;
    const env = { SAGAFLOW_URL: plane.url, SAGAFLOW_TOKEN: token };
    const human = await runCli(['kick', runId, '--reason', 'r56 busy'], env);
    const json = await runCli(['kick', runId, '--reason', 'r56 busy', '--json'], env);
    const doc = JSON.parse(json.out) as { error?: { exitCode?: number; message?: string } };
    const audited = await plane.db.prisma.repairCommand.count({ where: { target_id: runId } });
    release();
    await holding;
    expect(
      { human: human.code, json: json.code, jsonExit: doc.error?.exitCode, audited },
      `human: ${human.err}\njson: ${json.out}`,
    ).toEqual({ human: 1, json: 1, jsonExit: 1, audited: 0 });
    expect(human.err).toMatch(/another session held a row it needed.*nothing changed/);
    expect(doc.error?.message).toMatch(/another session held a row it needed/);
    const again = await runCli(['kick', runId, '--reason', 'r56 busy'], env);
    // Let go, the same command is no longer busy: it applies, or (the demo run moved on meanwhile) is refused.
    expect(again.err, again.err).not.toMatch(/another session held/);
    expect([0, 1, 2], again.err).toContain(again.code);
  }, 120_000);
});
