import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';

/**
 * Review 50 (held): a step that keeps failing under a long retry policy is not stuck (it is still
 * going), but it is visible: the run waits for "retry of step N (name) at T", and the step shows its
 * attempts out of its budget and the last error, which is what on-call needs to decide.
 */
const flaky = defineAction({
  name: 'r50-flaky',
  retry: { maxAttempts: 1000 },
  run: async () => {
    throw new Error('ECONNREFUSED inventory:443');
  },
});
const flow = defineFlow({
  name: 'r50-retrying',
  version: 1,
  run: async (ctx) => {
    await ctx.action(flaky, null).run();
    return null;
  },
});

describe(`review 50: a step retrying for ever shows its retry and last error (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [flow], actions: [flaky] });
  });
  afterAll(async () => t?.closeAll());

  it('after five failed attempts the run waits for the retry and the step carries attempts and the error', async () => {
    const { runId } = await t.engine.startFlow(flow, null);
    const d = await t.drive(runId, {
      timeoutMs: 20_000,
      until: (x) => x.run.status === 'Waiting' && (x.actions[0]?.attempts ?? 0) >= 5,
    });
    expect(d.run.stuckReason).toBeNull();
    expect(d.run.waitingFor).toMatch(/^retry of step 1 \(r50-flaky\) at /);
    const step = d.actions[0];
    expect([step?.status, step?.maxAttempts]).toEqual(['Failed', 1000]);
    expect(step?.attempts).toBeGreaterThanOrEqual(5);
    expect((step?.error as { message?: string }).message).toBe('ECONNREFUSED inventory:443');
    expect(d.run.safeRepairs).toContain('run.retry_step');
    expect(d.run.safeRepairs).toContain('run.terminate');
  }, 60_000);
});
