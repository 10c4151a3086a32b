import { afterEach, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../src/index.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { testDbKind } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';

const log: string[] = [];
const loopStep = defineAction({ name: 'fair-loop-step', run: async (n: number) => (log.push(`loop${n}`), n) });
const queuedStep = defineAction({ name: 'fair-queued-step', run: async (n: number) => (log.push('queued'), n) });
const loopFlow = defineFlow({ name: 'fair-loop', version: 1, run: async (ctx, n: number) => ctx.action(loopStep, n) });
const queuedFlow = defineFlow({
  name: 'fair-queued',
  version: 1,
  run: async (ctx, n: number) => ctx.action(queuedStep, n),
});

/** A start whose input check waits for the test: the pool can be stopped between its reserve and its hand-over. */
let openGate: () => void = () => undefined;
let entered: () => void = () => undefined;
const gatedFlow = defineFlow({
  name: 'fair-gated',
  version: 1,
  input: {
    '~standard': {
      version: 1,
      vendor: 'sagaflow-test',
      validate: async (v: unknown) => {
        entered();
        await new Promise<void>((r) => (openGate = r));
        return { value: v as number };
      },
    },
  },
  run: async (ctx, n: number) => ctx.action(loopStep, n),
});

/**
 * The start hand-off (ADR 0029) is a shortcut past the job table, never a way around it: queued
 * wakes still go first, and a wake handed to a pool that stopped meanwhile goes back to the queue
 * instead of waiting out a lease.
 */
describe(`the start hand-off keeps the queue fair (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>> | null = null;
  afterEach(async () => {
    await t?.engine.stopWorkers(2_000).catch(() => undefined);
    await t?.closeAll();
    t = null;
  });

  it('a pool kept full by starts from run.finished listeners still runs a run queued behind them', async () => {
    const chain = 40;
    const e = await openTestEngine({
      flows: [loopFlow, queuedFlow],
      actions: [loopStep, queuedStep],
      config: { worker: { concurrency: 1, poll_interval_ms: 20 } },
    });
    t = e;
    log.length = 0;
    let n = 1;
    e.engine.events.on('run.finished', async (ev: { flowName: string }) => {
      if (ev.flowName !== 'fair-loop' || n >= chain) return;
      n += 1;
      await e.engine.startFlow(loopFlow, n);
    });
    e.engine.startWorkers();
    await e.engine.startFlow(loopFlow, 1); // handed over: it takes the only slot
    await e.engine.startFlow(queuedFlow, 0); // the pool is full: a queued wake
    await waitFor('the queued run to run its step', async () => (log.includes('queued') ? true : undefined), 60_000);
    await waitFor(
      'the chain to end',
      async () => (n >= chain && log.includes(`loop${chain}`) ? true : undefined),
      60_000,
    );
    // Before the fix it ran only after the whole chain: the pool never looked at the queue.
    expect(log.indexOf('queued')).toBeLessThan(chain / 2);
  });

  it('a start that reserved a slot while its pool stopped gives its wake back: the next pool runs it at once', async () => {
    const e = await openTestEngine({
      flows: [gatedFlow],
      actions: [loopStep],
      config: { worker: { lease_seconds: 3600 } },
    });
    t = e;
    const inCheck = new Promise<void>((r) => (entered = r));
    e.engine.startWorkers();
    const started = e.engine.startFlow(gatedFlow, 7); // reserves a slot, then waits in its input check
    await inCheck;
    expect((await e.engine.stopWorkers(2_000)).drained).toBe(true);
    e.engine.startWorkers();
    openGate();
    const { runId } = await started;
    // The business clock of the test engine stands still: a wake left leased would never come back.
    await waitFor('the run to complete on the new pool', async () =>
      (await e.engine.getRun(runId))?.run.status === 'Completed' ? true : undefined,
    );
  });
});
