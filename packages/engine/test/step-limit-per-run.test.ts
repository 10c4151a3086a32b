import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction } from '../src/definitions/define-action.ts';
import { defineFlow } from '../src/definitions/define-flow.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { testDbKind } from './support/test-database.ts';

/**
 * ADR 0125: `limits.max_steps_per_run`. A run whose code asks for one step more than the limit ends
 * Failed naming the setting, with exactly `max` steps recorded; the step at the warning fraction
 * journals `run_step_limit_near` once, before that step's row exists. A run within the limit is untouched.
 */
const tick = defineAction({ name: 'limit.tick', run: (i: { i: number }) => Promise.resolve({ i: i.i }) });
const forever = defineFlow({
  name: 'limit.forever',
  version: 1,
  run: async (ctx) => {
    // A catch that swallows every failure: the limit must still end the run.
    for (let i = 0; ; i++)
      try {
        await ctx.action(tick, { i }).run();
      } catch {
        // keep going
      }
  },
});
const exactly = defineFlow({
  name: 'limit.exactly',
  version: 1,
  run: async (ctx, input: { n: number }) => {
    for (let i = 0; i < input.n; i++) await ctx.action(tick, { i }).run();
    return { n: input.n };
  },
});

describe(`limits.max_steps_per_run (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [forever, exactly],
      actions: [tick],
      config: { limits: { max_steps_per_run: 40, steps_per_run_warning_fraction: 0.25 } },
    });
  });
  afterAll(async () => {
    await t?.closeAll();
  });

  it('a run asking for step max+1 ends Failed naming the setting, with max steps recorded and one warning at the fraction', async () => {
    const { runId } = await t.engine.startFlow(forever, {});
    const done = await t.drive(runId, { timeoutMs: 30_000 });
    expect(done.run.status).toBe('Failed');
    expect(JSON.stringify(done.run.error)).toContain('limits.max_steps_per_run');
    const steps = await t.db.prisma.actionRun.findMany({
      where: { run_id: runId },
      select: { sequence: true, status: true },
    });
    expect(steps.length).toBe(40);
    expect(steps.every((s) => s.status === 'Completed')).toBe(true);
    const anomalies = await t.db.prisma.anomalyLog.findMany({ where: { run_id: runId } });
    expect(anomalies.map((a) => ({ code: a.code, sequence: a.sequence }))).toEqual([
      { code: 'run_step_limit_near', sequence: 10 },
    ]);
    expect(anomalies[0]?.message).toContain('limits.max_steps_per_run');
  });

  it('a run of exactly max steps completes', async () => {
    const { runId } = await t.engine.startFlow(exactly, { n: 40 });
    const done = await t.drive(runId, { timeoutMs: 30_000 });
    expect(done.run.status).toBe('Completed');
    expect(done.run.output).toEqual({ n: 40 });
  });
});
