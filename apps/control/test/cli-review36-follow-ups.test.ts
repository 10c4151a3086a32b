import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { apiClient, createTestOperator, signInCookie, startWaitingRun, testDatabaseUrl } from './support/test-plane.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';
import { runCli } from './support/run-cli.ts';

/**
 * ADR 0110 beside review 36's own tests: a key given on the command line is sent for a finished run only when
 * the control plane says it was used (a new one keeps the local refusal, and nothing is written), and a dry run
 * of a command the approval policy gates says that applying it will wait for approval.
 */
describe('the CLI after review 36', () => {
  let plane: ControlPlane;
  let cookie = '';
  let env: Record<string, string> = {};
  beforeAll(async () => {
    const url = await testDatabaseUrl('cli_r36_follow_ups');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'operator'));
    const token = (await apiClient(plane.url, cookie).tokens.create.mutate({ name: 'cli' })).token;
    env = { SAGAFLOW_URL: plane.url, SAGAFLOW_TOKEN: token };
  });
  afterAll(async () => {
    await plane.stop();
  });

  const repairRows = async (runId: string) =>
    plane.db.prisma.$queryRawUnsafe<{ idempotency_key: string; status: string }[]>(
      `select idempotency_key, status from sagaflow.repair_commands where target_id = $1 order by at`,
      runId,
    );

  it('a finished run with a key never used: exit 2 saying so, and nothing is written', async () => {
    const runId = await startWaitingRun(plane, cookie);
    const first = await runCli(['expire', runId, '--reason', 'deadline passed'], env);
    expect(first.code, first.err).toBe(0);
    for (let i = 0; i < 400 && !(await plane.engine.getRun(runId))?.run.finishedAt; i++)
      await new Promise((r) => setTimeout(r, 25));
    const fresh = `cli-${randomUUID()}`;
    const r = await runCli(['cancel', runId, '--reason', 'too late', '--idempotency-key', fresh], env);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`--idempotency-key ${fresh} was never used`);
    expect(r.err).toMatch(/is Expired .*a finished run is never changed/);
    expect((await repairRows(runId)).map((x) => x.idempotency_key)).not.toContain(fresh);
    // Without a key the local refusal sends nothing at all, as before.
    const plain = await runCli(['cancel', runId, '--reason', 'too late'], env);
    expect(plain.code).toBe(2);
    expect(plain.err).toContain('nothing was sent');
    expect(await repairRows(runId)).toHaveLength(1);
  });

  it('a dry run of a command the policy gates says applying it waits for approval', async () => {
    const runId = await startWaitingRun(plane, cookie);
    const policy = await plane.engine.approvals.policy();
    await plane.engine.approvals.setPolicy(
      { gatedCommands: [...policy.gatedCommands, 'run.kick'], bulkThreshold: policy.bulkThreshold },
      { actor: 'test' },
    );
    try {
      const gated = await runCli(['kick', runId, '--dry-run'], env);
      expect(gated.code, gated.err).toBe(0);
      expect(gated.out).toMatch(
        /the policy gates run\.kick: applied, it waits for another operator's approval \(exit 4\)/,
      );
    } finally {
      await plane.engine.approvals.setPolicy(
        { gatedCommands: policy.gatedCommands, bulkThreshold: policy.bulkThreshold },
        { actor: 'test' },
      );
    }
    const open = await runCli(['kick', runId, '--dry-run'], env);
    expect(open.code, open.err).toBe(0);
    expect(open.out).not.toMatch(/waits for another operator's approval/);
  });
});
