import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

/**
 * Review 50: a run cancelled while its step ignores the cancellation (the step's code never looks and
 * never returns) does not hang "cancelling" for ever: once its cleanup window closes the run is closed
 * Cancelled and says the window closed (held). But it is closed the way a terminate or the run timeout
 * closes a run, with a step still Running under it whose outcome will be refused, and ADR 0091 says such
 * a close must state what it left in flight (`leftUndone.in_flight`, as TimedOut and Terminated do):
 * the card may or may not have been charged, and on-call must be told to check.
 */
let release: (() => void) | null = null;
let entered: (() => void) | null = null;
const deaf = defineAction({
  name: 'r50-deaf',
  run: async () => {
    entered?.();
    await new Promise<void>((r) => (release = r));
    return { done: true };
  },
});
const flow = defineFlow({
  name: 'r50-deaf-flow',
  version: 1,
  run: async (ctx) => {
    await ctx.action(deaf, null).run();
    return null;
  },
});

describe(`review 50: a cancellation a step ignores ends when its window closes (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [flow], actions: [deaf] });
  });
  afterAll(async () => {
    release?.();
    await t?.closeAll();
  });

  it('a run cancelled while a step ignores it is closed Cancelled at its window and names that step as in flight', async () => {
    const inStep = new Promise<void>((r) => (entered = r));
    const { runId } = await t.engine.startFlow(flow, null);
    t.engine.startWorkers();
    await inStep;
    await t.engine.cancel(runId, { reason: 'customer withdrew', cleanupSeconds: 5 });
    // Inside the window it is open and says a cancellation was asked for.
    const open = await t.engine.getRun(runId);
    expect(open?.run.cancelRequestedAt).not.toBeNull();
    expect(['Running', 'Waiting']).toContain(open?.run.status);
    t.clock.advance(6_000);
    const done = await waitFor(
      'the run to close at its cleanup deadline',
      async () => {
        const d = await t.engine.getRun(runId);
        return d && !['Pending', 'Running', 'Waiting', 'Compensating'].includes(d.run.status) ? d : undefined;
      },
      20_000,
    );
    expect(done.run.status).toBe('Cancelled');
    expect(JSON.stringify(done.run.error)).toContain('cleanup window closed');
    const step = done.actions.find((a) => a.name === 'r50-deaf');
    expect(step?.status, 'the deaf step is still Running under the closed run').toBe('Running');
    expect(
      (done.run.leftUndone as { in_flight?: { name: string }[] } | null)?.in_flight?.map((s) => s.name) ?? null,
      'the closed run names the step it left in flight (ADR 0091)',
    ).toEqual(['r50-deaf']);
  }, 60_000);
});
