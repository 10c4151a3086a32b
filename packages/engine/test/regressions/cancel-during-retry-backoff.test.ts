import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow, isFlowError } from '../../src/index.ts';
import { openTestEngine } from '../support/open-test-engine.ts';
import { testDbKind } from '../support/test-database.ts';

/**
 * Cooperative cancellation is delivered only at a NEW step or by interrupting a signal/timer/child
 * wait (check-history.ts:28-29, wait-step.ts:79). A step waiting out its retry backoff (row Failed,
 * the wait engine-owned and interruptible) is a recorded row, so the cancel wake replays, finds the
 * retry not due and parks again. The cleanup window closes and execute-run.ts:36 settles the run
 * Cancelled; the flow never saw `cancelled`, so the booking it holds is never released.
 */
const log: string[] = [];
const hold = defineAction({ name: 'hold', run: async () => (log.push('hold'), { seat: '1A' }) });
const free = defineAction({ name: 'free', run: async () => (log.push('free'), null) });
const flaky = defineAction({
  name: 'pay',
  retry: { maxAttempts: 5, backoff: { initialMs: 3_600_000, jitter: false } },
  run: async () => {
    log.push('pay');
    throw new Error('psp unavailable');
  },
});
const flow = defineFlow({
  name: 'cancel-in-backoff',
  version: 1,
  run: async (ctx) => {
    try {
      await ctx.action(hold, null).compensateWith(free, () => null);
      await ctx.action(flaky, null);
      return null;
    } catch (err) {
      if (isFlowError(err, 'cancelled')) await ctx.compensate();
      throw err;
    }
  },
});

describe(`regression (review): cancellation of a run whose step is in retry backoff (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [flow], actions: [hold, free, flaky] });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  it('the flow gets `cancelled` within the cleanup window and its compensation runs', async () => {
    const { runId } = await t.engine.startFlow(flow, null);
    await t.drive(runId, {
      skipTime: false,
      until: (d) => d.actions[1]?.status === 'Failed' && d.run.status === 'Waiting',
    });
    await t.engine.cancel(runId, { reason: 'customer left', cleanupSeconds: 60 });
    const d = await t.drive(runId);
    expect({
      status: d.run.status,
      error: (d.run.error as { name?: string } | null)?.name,
      compensations: d.compensations.map((c) => [c.name, c.status]),
      freed: log.includes('free'),
    }).toEqual({ status: 'Cancelled', error: 'FlowError', compensations: [['free', 'Completed']], freed: true });
  });
});
