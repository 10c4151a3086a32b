import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defineAction, defineFlow, isFlowError } from '../../src/index.ts';
import { openTestEngine } from '../support/open-test-engine.ts';
import { testDbKind } from '../support/test-database.ts';
import { travelSaga } from '../support/travel.ts';

const noop = (name: string) => defineAction({ name, run: async () => ({ ok: name }) });
const x = noop('x');
const y = noop('y');
const parallelFirst = defineFlow({
  name: 'parallel-first',
  version: 1,
  run: async (ctx) => {
    try {
      await ctx.parallel([ctx.action(x, null), ctx.action(y, null)]);
      return 'done';
    } catch (err) {
      if (isFlowError(err, 'cancelled')) return 'cancelled';
      throw err;
    }
  },
});
const child = defineFlow({
  name: 'abandoned-child',
  version: 1,
  run: async (ctx) => (await ctx.awaitSignal('finish', { timeoutSeconds: 3600 })) as string,
});
const parent = defineFlow({
  name: 'parent-abandons',
  version: 1,
  run: async (ctx) => ctx.child(child, null, { cancellation: 'abandon' }),
});
const bigOutput = defineAction({
  name: 'big-output',
  // A BigInt slips past the Json type at runtime (e.g. a driver's numeric column).
  run: async () => ({ amount: BigInt(10) }) as never,
});
const nanPolicy = defineAction({
  name: 'nan-policy',
  retry: { maxAttempts: 3, delay: () => Number.NaN },
  run: async () => {
    throw new Error('transient');
  },
});
const nanFlow = defineFlow({ name: 'nan-policy-flow', version: 1, run: async (ctx) => ctx.action(nanPolicy, null) });
const bigFlow = defineFlow({ name: 'big-output-flow', version: 1, run: async (ctx) => ctx.action(bigOutput, null) });

describe(`regression (review): smaller departures (${testDbKind()})`, () => {
  const saga = travelSaga();
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [...saga.flows, parallelFirst, child, parent, bigFlow, nanFlow],
      actions: [...saga.actions, x, y, bigOutput, nanPolicy],
    });
  });
  afterAll(async () => {
    await t.closeAll();
  });
  beforeEach(() => {
    saga.log.length = 0;
    saga.failing.clear();
  });

  it('ADR 0006: a rollback in which a compensation failed (continue-with-error) does not end "Compensated"', async () => {
    saga.failing.add('book-car');
    saga.failing.add('cancel-hotel');
    const d = await t.runToCompletion(
      saga.flows.find((f) => f.name === 'booking-continue')!,
      { tripId: 'cwe' },
    );
    expect(d.compensations.map((c) => c.status)).toEqual(['Errored', 'Completed']);
    expect(d.run.status).not.toBe('Compensated');
  });

  it('ADR 0006: cancellation is delivered once, also when it lands on a parallel block', async () => {
    await t.engine.stopWorkers(); // cancel before the first replay
    const { runId } = await t.engine.startFlow(parallelFirst, null);
    await t.engine.cancel(runId, { reason: 'stop', cleanupSeconds: 60 });
    const d = await t.drive(runId, { skipTime: false });
    expect(d.run.output).toBe('cancelled');
    expect({
      cancelRows: d.actions.filter((a) => a.kind === 'cancel').length,
      delivered: d.events.filter((e) => e.type === 'run.cancel_delivered').length,
    }).toEqual({ cancelRows: 1, delivered: 1 });
  });

  it('a child finishing after its parent was terminated writes nothing to the finished parent', async () => {
    const { runId } = await t.engine.startFlow(parent, null);
    const waiting = await t.drive(runId, {
      skipTime: false,
      until: (d) => d.run.status === 'Waiting' && d.actions.some((a) => a.kind === 'child'),
    });
    const kid = await t.db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: runId } });
    await t.drive(kid.id, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    await t.engine.terminate(runId, { reason: 'operator' }); // 'abandon' child is not reached
    await t.engine.signal(kid.id, 'finish', 'late');
    await t.drive(kid.id, { skipTime: false });
    const after = await t.engine.getRun(runId);
    const stepBefore = waiting.actions.find((a) => a.kind === 'child');
    const stepAfter = after?.actions.find((a) => a.kind === 'child');
    const types = after?.events.map((e) => e.type) ?? [];
    expect({
      step: stepAfter?.status,
      eventsAfterTerminated: types.slice(types.indexOf('run.terminated') + 1),
    }).toEqual({ step: stepBefore?.status, eventsAfterTerminated: [] });
  });

  it('an action output that cannot be stored fails the step instead of wedging the run as "running on another worker"', async () => {
    const { runId } = await t.engine.startFlow(bigFlow, null);
    t.engine.startWorkers();
    await new Promise((r) => setTimeout(r, 500));
    t.clock.advance(61_000); // the job's lease runs out: at-least-once redelivery
    const d = await t.drive(runId, { timeoutMs: 4_000 }).catch(async () => (await t.engine.getRun(runId))!);
    expect({ status: d.run.status, step: d.actions[0]?.status, waitingFor: d.run.waitingFor }).toEqual({
      status: 'Failed',
      step: 'Errored',
      waitingFor: null,
    });
  });

  it('a retry policy whose delay is not a finite number fails the step safely (like one that throws)', async () => {
    const { runId } = await t.engine.startFlow(nanFlow, null);
    t.engine.startWorkers();
    await new Promise((r) => setTimeout(r, 500));
    t.clock.advance(61_000);
    const d = await t.drive(runId, { timeoutMs: 4_000 }).catch(async () => (await t.engine.getRun(runId))!);
    expect({ status: d.run.status, step: d.actions[0]?.status, waitingFor: d.run.waitingFor }).toEqual({
      status: 'Failed',
      step: 'Errored',
      waitingFor: null,
    });
  });
});
