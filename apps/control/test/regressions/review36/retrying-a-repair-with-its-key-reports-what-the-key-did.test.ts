import { randomUUID } from 'node:crypto';
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
 * `sagaflow help` (usage.ts): "--idempotency-key K: the same key never acts twice"; the unreachable message
 * (control-client.ts): "If a repair timed out, run it again with the same --idempotency-key: it will not act
 * twice"; README "Operator CLI" exit 0: "the repair applied (or its idempotency key replayed an applied result)".
 * A script that retries a repair whose answer it never saw runs the same command line again. When that repair
 * finished the run (expire, cancel, an approved terminate), the retry must say the key's repair applied (exit 0,
 * replayed), not "refused, nothing changed" (exit 2): that is what a script would act on.
 */
describe('running the same repair command line twice with its --idempotency-key', () => {
  let plane: ControlPlane;
  let cookie = '';
  let env: Record<string, string> = {};
  beforeAll(async () => {
    const url = await testDatabaseUrl('r36_retry_key');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    cookie = await signInCookie(plane.url, await createTestOperator(plane, 'operator'));
    const token = (await apiClient(plane.url, cookie).tokens.create.mutate({ name: 'cli' })).token;
    env = { SAGAFLOW_URL: plane.url, SAGAFLOW_TOKEN: token };
  });
  afterAll(async () => {
    await plane.stop();
  });

  async function finished(runId: string): Promise<string> {
    for (let i = 0; i < 400; i++) {
      const run = (await plane.engine.getRun(runId))?.run;
      if (run?.finishedAt) return run.status;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`run ${runId} did not finish`);
  }

  it('an expire that finished its run: the second run of the command exits 0 (replayed), not 2 "nothing was sent"', async () => {
    const runId = await startWaitingRun(plane, cookie);
    const args = ['expire', runId, '--reason', 'deadline passed', '--idempotency-key', `cli-${randomUUID()}`];
    const first = await runCli(args, env);
    expect(first.code, first.err).toBe(0);
    expect(await finished(runId)).toBe('Expired');
    const applied = await plane.db.prisma.$queryRawUnsafe<{ n: bigint }[]>(
      `select count(*) as n from sagaflow.repair_commands where target_id = $1 and status = 'applied'`,
      runId,
    );
    expect(Number(applied[0]?.n)).toBe(1);

    const again = await runCli([...args, '--json'], env);
    expect({ code: again.code, err: again.err }).toEqual({ code: 0, err: '' });
    expect((JSON.parse(again.out) as { result: { replayed: boolean } }).result.replayed).toBe(true);
  });
});
