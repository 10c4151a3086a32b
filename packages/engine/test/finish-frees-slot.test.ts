import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../src/index.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { testDbKind } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';

const ran: number[] = [];
const step = defineAction({ name: 'slot-step', run: async (n: number) => (ran.push(n), n) });
const flow = defineFlow({ name: 'slot', version: 1, run: async (ctx, n: number) => ctx.action(step, n) });

/**
 * A run whose finishing transaction committed gives its pool slot back before its `run.finished`
 * listeners run (ADR 0029): a run they start is handed to the pool at once, not left for a poll.
 */
describe(`a finished run frees its slot before its listeners run (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    // One slot, and a poll far away: only the hand-off can run the second run in time.
    t = await openTestEngine({
      flows: [flow],
      actions: [step],
      config: { worker: { concurrency: 1, poll_interval_ms: 60_000 } },
    });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  it('a listener of a one-slot pool starts a run and waits for its step: the step runs, the listener returns', async () => {
    let second: string | null = null;
    let listenerSaw: 'ran' | 'starved' | null = null;
    t.engine.events.on('run.finished', async () => {
      if (second !== null) return;
      second = (await t.engine.startFlow(flow, 2)).runId;
      // The first run's handler is still in the pool's only slot until this listener returns.
      listenerSaw = await waitFor('the second run to run its step', async () => (ran.includes(2) ? true : undefined))
        .then(() => 'ran' as const)
        .catch(() => 'starved' as const);
    });
    t.engine.startWorkers();
    const { runId: first } = await t.engine.startFlow(flow, 1);
    await waitFor('the first run.finished listener to return', async () => listenerSaw ?? undefined, 30_000);
    expect(listenerSaw).toBe('ran');
    expect((await t.drive(first, { skipTime: false })).run.status).toBe('Completed');
    const done = await t.drive(second ?? '', { skipTime: false });
    expect([done.run.status, done.run.output]).toEqual(['Completed', 2]);
    expect(ran).toEqual([1, 2]);
    expect(await t.db.prisma.job.count()).toBe(0);
  });
});
