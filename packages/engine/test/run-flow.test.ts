import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../src/create-engine.ts';
import type { Database } from '../src/db/database.ts';
import { defineAction } from '../src/definitions/define-action.ts';
import { defineFlow } from '../src/definitions/define-flow.ts';
import { isFlowError } from '../src/runtime/flow-error.ts';
import { openTestDatabase, testDbKind } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';

const calls = new Map<string, number>();
const count = (key: string) => calls.set(key, (calls.get(key) ?? 0) + 1).get(key) ?? 0;

const double = defineAction({
  name: 'double',
  run: async (i: { n: number; key: string }) => (count(`double:${i.key}`), { n: i.n * 2 }),
});
const flaky = defineAction({
  name: 'flaky',
  retry: { maxAttempts: 3 },
  run: async (i: { key: string; failures: number }) => {
    if (count(`flaky:${i.key}`) <= i.failures) throw new Error(`transient ${i.key}`);
    return { ok: true };
  },
});

const oneStep = defineFlow({
  name: 'one-step',
  version: 1,
  run: async (ctx, i: { n: number; key: string }) => ctx.action(double, i),
});
const retrying = defineFlow({
  name: 'retrying',
  version: 1,
  run: async (ctx, i: { key: string; failures: number }) => {
    try {
      return await ctx.action(flaky, i);
    } catch (err) {
      if (isFlowError(err, 'action_failed')) throw new Error(`gave up after retries: ${err.message}`, { cause: err });
      throw err;
    }
  },
});

describe(`a flow run on a worker (${testDbKind()})`, () => {
  let db: Database;
  let engine: Engine;
  beforeAll(async () => {
    db = await openTestDatabase();
    engine = createEngine({
      db,
      flows: [oneStep, retrying],
      actions: [double, flaky],
      config: {
        worker: { poll_interval_ms: 20 },
        retry: { base_delay_ms: 20, max_delay_ms: 40 },
        logging: { anomaly_level: null },
      },
    });
    engine.startWorkers();
  });
  afterAll(async () => {
    await engine.stopWorkers();
    await db.close();
  });

  const settled = (runId: string) =>
    waitFor(`run ${runId} to settle`, async () => {
      const d = await engine.getRun(runId);
      return d && ['Completed', 'Failed'].includes(d.run.status) ? d : undefined;
    });

  it('a one-action flow is recorded and completes with its output, the step executed once', async () => {
    const { runId } = await engine.startFlow(oneStep, { n: 21, key: 'a' });
    const d = await settled(runId);
    expect(d.run.status).toBe('Completed');
    expect(d.run.output).toEqual({ n: 42 });
    expect(d.actions).toHaveLength(1);
    expect(d.actions[0]).toMatchObject({ name: 'double', status: 'Completed', attempts: 1, output: { n: 42 } });
    expect(calls.get('double:a')).toBe(1);
    expect(d.events.map((e) => e.type)).toEqual([
      'run.started',
      'run.running',
      'action.started',
      'action.completed',
      'run.completed',
    ]);
  });

  it('a failing action is retried per its policy, showing Failed between tries, then completes', async () => {
    const { runId } = await engine.startFlow(retrying, { key: 'b', failures: 2 });
    const d = await settled(runId);
    expect(d.run.status).toBe('Completed');
    expect(d.actions[0]).toMatchObject({ status: 'Completed', attempts: 3 });
    expect(d.events.filter((e) => e.type === 'action.retry_scheduled')).toHaveLength(2);
  });

  it('an action whose retries are spent fails for good and the flow sees the recorded failure', async () => {
    const { runId } = await engine.startFlow(retrying, { key: 'c', failures: 5 });
    const d = await settled(runId);
    expect(d.run.status).toBe('Failed');
    expect(d.actions[0]).toMatchObject({ status: 'Errored', attempts: 3 });
    expect(d.run.error).toMatchObject({ message: expect.stringContaining('gave up after retries') as unknown });
    expect(calls.get('flaky:c')).toBe(3);
  });

  it('rejects a second start with the same business key, leaving the first run alone', async () => {
    await engine.startFlow(oneStep, { n: 1, key: 'd' }, { businessKey: 'order-d' });
    await expect(engine.startFlow(oneStep, { n: 2, key: 'd2' }, { businessKey: 'order-d' })).rejects.toMatchObject({
      code: 'duplicate_business_key',
    });
    expect(await db.prisma.flowRun.count({ where: { business_key: 'order-d' } })).toBe(1);
  });

  it('rejects starting a flow that is not registered, writing nothing', async () => {
    const before = await db.prisma.flowRun.count();
    await expect(engine.startFlow('nope', {})).rejects.toMatchObject({ code: 'unknown_flow' });
    expect(await db.prisma.flowRun.count()).toBe(before);
  });
});
