import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../provided-context.ts';
import {
  apiClient,
  createTestOperator,
  rawCall,
  signInCookie,
  startWaitingRun,
  testDatabaseUrl,
} from '../../support/test-plane.ts';
import { parseEnv } from '../../../src/env.ts';
import { startControlPlane, type ControlPlane } from '../../../src/start-control-plane.ts';
import { runCli } from '../../support/run-cli.ts';

type Data<T = Record<string, unknown>> = { result: { data: T } };

const cli = runCli;

/**
 * ADR 0020: "The same idempotency key is the same draft (the answer says replayed: true and shows what
 * became of it)". ADR 0021 / exit-codes.ts: exit 0 is "a repair applied, or replayed its first applied
 * result"; 4 is "not done yet". The CLI prints the flags to repeat a command "without a second
 * effect" and reads the answer's `status`. So a repeat of a draft that was since approved and applied
 * must not say it still waits, nor one that was rejected.
 */
describe('repeating a gated repair with its idempotency key after the approval was decided', () => {
  let plane: ControlPlane;
  const names = { ana: '', ben: '' };
  const cookies = { ana: '', ben: '' };
  let anaToken = '';
  beforeAll(async () => {
    const url = await testDatabaseUrl('r31_replayed_draft');
    plane = await startControlPlane(parseEnv({ DATABASE_URL: url, CONTROL_PORT: '0', LOG_LEVEL: 'silent' }));
    for (const who of ['ana', 'ben'] as const) {
      names[who] = await createTestOperator(plane, 'operator');
      cookies[who] = await signInCookie(plane.url, names[who]);
    }
    anaToken = (await apiClient(plane.url, cookies.ana).tokens.create.mutate({ name: 'ana-cli' })).token;
  });
  afterAll(async () => {
    await plane.stop();
  });

  const waitingRun = () => startWaitingRun(plane, cookies.ana);
  const terminate = (runId: string, key: string) => ({
    kind: 'run.terminate',
    target: { runId },
    expected: { runStatus: 'Waiting' },
    reason: 'charged twice',
    idempotencyKey: key,
  });
  const apply = async (runId: string, key: string) => {
    const a = await rawCall(plane.url, 'repairs.applyOne', {
      type: 'mutation',
      cookie: cookies.ana,
      input: terminate(runId, key),
    });
    expect(a.status).toBe(200);
    return (a.body as Data<{ status: string; approvalId: string; replayed: boolean; approval: { status: string } }>)
      .result.data;
  };

  it('over the API: once approved and applied, the replay does not answer awaiting_approval', async () => {
    const runId = await waitingRun();
    const key = randomUUID();
    const first = await apply(runId, key);
    expect(first.status).toBe('awaiting_approval');
    await apiClient(plane.url, cookies.ben).approvals.approve.mutate({ id: first.approvalId });
    expect((await plane.engine.getRun(runId))?.run.status).toBe('Terminated');
    const again = await apply(runId, key);
    expect(again.approval.status).toBe('applied');
    expect({ status: again.status, replayed: again.replayed }).toEqual({ status: 'applied', replayed: true });
  });

  it('over the API: once rejected, the replay does not answer awaiting_approval', async () => {
    const runId = await waitingRun();
    const key = randomUUID();
    const first = await apply(runId, key);
    await apiClient(plane.url, cookies.ben).approvals.reject.mutate({ id: first.approvalId, reason: 'no' });
    const again = await apply(runId, key);
    expect(again.approval.status).toBe('rejected');
    expect(again.status).not.toBe('awaiting_approval');
  });

  it('the CLI repeating the printed command: exit 0 once applied, not 4 ("waiting for approval")', async () => {
    const runId = await waitingRun();
    const key = `cli-${randomUUID()}`;
    const args = [
      'terminate',
      runId,
      '--reason',
      'charged twice',
      '--idempotency-key',
      key,
      '--expect-status',
      'Waiting',
    ];
    const env = { SAGAFLOW_URL: plane.url, SAGAFLOW_TOKEN: anaToken };
    const first = await cli(args, env);
    expect(first.code, first.err + first.out).toBe(4);
    const approvalId = /approval\s+([0-9a-f-]{36})/.exec(first.out)?.[1] ?? '';
    await apiClient(plane.url, cookies.ben).approvals.approve.mutate({ id: approvalId });
    expect((await plane.engine.getRun(runId))?.run.status).toBe('Terminated');
    const again = await cli(args, env);
    expect({ code: again.code, says: again.out.split('\n')[0] }).toEqual({
      code: 0,
      says: expect.not.stringMatching(/waiting for another operator/) as string,
    });
  });

  it('the CLI repeating the printed command after a rejection: not exit 4', async () => {
    const runId = await waitingRun();
    const key = `cli-${randomUUID()}`;
    const args = [
      'terminate',
      runId,
      '--reason',
      'charged twice',
      '--idempotency-key',
      key,
      '--expect-status',
      'Waiting',
    ];
    const env = { SAGAFLOW_URL: plane.url, SAGAFLOW_TOKEN: anaToken };
    const first = await cli(args, env);
    const approvalId = /approval\s+([0-9a-f-]{36})/.exec(first.out)?.[1] ?? '';
    await apiClient(plane.url, cookies.ben).approvals.reject.mutate({ id: approvalId, reason: 'no' });
    const again = await cli(args, env);
    expect(again.code, again.out).not.toBe(4);
  });
});
