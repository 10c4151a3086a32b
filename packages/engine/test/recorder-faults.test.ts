import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow, NonRetryableError } from '../src/index.ts';
import type { EngineEventMap } from '../src/runtime/engine-events.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { testDbKind } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';

const calls = new Map<string, number>();
const bump = (k: string) => calls.set(k, (calls.get(k) ?? 0) + 1).get(k) ?? 0;
const tracked = (name: string, extra: Pick<Parameters<typeof defineAction>[0], 'retry'> = {}) =>
  defineAction({ name, run: async (i: { key: string }) => (bump(`${name}:${i.key}`), { ok: i.key }), ...extra });

const plain = tracked('plain');
const declined = defineAction({
  name: 'declined',
  retry: { maxAttempts: 5 },
  run: async (i: { key: string }) => {
    bump(`declined:${i.key}`);
    throw new NonRetryableError('card declined');
  },
});
const namedFatal = defineAction({
  name: 'named-fatal',
  retry: { maxAttempts: 5, nonRetryableErrors: ['ValidationError'] },
  run: async (i: { key: string }) => {
    bump(`named-fatal:${i.key}`);
    const e = new Error('bad input');
    e.name = 'ValidationError';
    throw e;
  },
});
const badPolicy = defineAction({
  name: 'bad-policy',
  retry: {
    maxAttempts: 5,
    delay: () => {
      throw new Error('policy bug');
    },
  },
  run: async (i: { key: string }) => {
    bump(`bad-policy:${i.key}`);
    throw new Error('transient');
  },
});
const one = (action: ReturnType<typeof tracked> | typeof declined) =>
  defineFlow({ name: `one-${action.name}`, version: 1, run: async (ctx, key: string) => ctx.action(action, { key }) });
const flows = [one(plain), one(declined), one(namedFatal), one(badPolicy)];
const flow = (name: string) => flows.find((f) => f.name === `one-${name}`)!;

describe(`the recorder under faults, and retry policies (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  const rejected: EngineEventMap['action.outcome_rejected'][] = [];
  beforeAll(async () => {
    t = await openTestEngine({ flows, actions: [plain, declined, namedFatal, badPolicy] });
    t.engine.events.on('action.outcome_rejected', (e) => {
      rejected.push(e);
    });
  });
  afterAll(async () => {
    await t.closeAll();
  });
  const anomalies = (runId: string) =>
    t.db.prisma.anomalyLog.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } });

  it('a worker that lost its row does not record, journals outcome_rejected, and hands the result to ActionOutcomeRejected', async () => {
    t.faults.loseClaim('plain');
    const { runId } = await t.engine.startFlow(flow('plain'), 'k1');
    const d = await t.drive(runId, { skipTime: false, until: (x) => x.run.status === 'Waiting' });
    expect(d.actions[0]).toMatchObject({ status: 'Running', output: null, attempts: 2 });
    expect((await anomalies(runId)).map((a) => a.code)).toContain('outcome_rejected');
    expect(rejected.find((e) => e.runId === runId)).toMatchObject({
      name: 'plain',
      outcome: 'completed',
      output: { ok: 'k1' },
      attempt: 1,
    });
  });

  it('a listener that throws on the rejection is journaled as rejection_undelivered; the refusal stands', async () => {
    const off = t.engine.events.on('action.outcome_rejected', () => {
      throw new Error('listener bug');
    });
    t.faults.loseClaim('plain');
    const { runId } = await t.engine.startFlow(flow('plain'), 'k2');
    await t.drive(runId, { skipTime: false, until: (x) => x.run.status === 'Waiting' });
    off();
    const codes = (await anomalies(runId)).map((a) => a.code);
    expect(codes).toEqual(expect.arrayContaining(['outcome_rejected', 'rejection_undelivered']));
  });

  it('a crash after the claim leaves the row Running and the step is not run twice without reclaim', async () => {
    t.faults.crashAfterClaim('plain');
    // Its own pool: this test ran only after another had started one (t.drive does), and then only if
    // that pool claimed and replayed within two fixed 300 ms waits. It now waits for each of those.
    t.engine.startWorkers();
    const { runId } = await t.engine.startFlow(flow('plain'), 'k3');
    await waitFor('the claim the worker crashed after', async () =>
      (await t.engine.getRun(runId))?.actions[0]?.status === 'Running' ? true : undefined,
    );
    await t.faults.duplicateDelivery(runId, 2);
    await waitFor('a duplicate to find the row held', async () =>
      (await anomalies(runId)).some((a) => a.code === 'claim_lost') ? true : undefined,
    );
    const d = await t.engine.getRun(runId);
    expect(d?.actions[0]).toMatchObject({ status: 'Running', attempts: 1 });
    expect(calls.get('plain:k3')).toBeUndefined();
    expect((await anomalies(runId)).map((a) => a.code)).toContain('claim_lost');
  });

  it('NonRetryableError fails the step at once, whatever attempts remain', async () => {
    const d = await t.runToCompletion(flow('declined'), 'k4');
    expect(d.run.status).toBe('Failed');
    expect(d.actions[0]).toMatchObject({ status: 'Errored', attempts: 1 });
    expect(calls.get('declined:k4')).toBe(1);
  });

  it('an error name listed as non-retryable is not retried', async () => {
    const d = await t.runToCompletion(flow('named-fatal'), 'k5');
    expect(d.actions[0]).toMatchObject({ status: 'Errored', attempts: 1 });
  });

  it('a retry policy that throws is journaled retry_policy_threw and the step fails safely', async () => {
    const d = await t.runToCompletion(flow('bad-policy'), 'k6');
    expect(d.run.status).toBe('Failed');
    expect(d.actions[0]).toMatchObject({ status: 'Errored', attempts: 1 });
    expect((await anomalies(d.run.id)).map((a) => a.code)).toContain('retry_policy_threw');
  });
});
