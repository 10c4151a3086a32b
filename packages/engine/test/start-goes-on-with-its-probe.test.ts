import { describe, expect, it } from 'vitest';
import { defineAction, defineFlow, EngineError } from '../src/index.ts';
import { completedStepsHistory, stepHistory } from './support/step-history.ts';
import { testDbKind } from './support/test-database.ts';
import { finished, useEngineWithPool } from './regressions/review10/use-engine-with-pool.ts';

/**
 * ADR 0097: a start handed to its own pool probes the flow's code up to its first step (ADR 0048),
 * and the pool's replay goes on from where that probe is held, instead of running the code again
 * from its first line. The code before the first step runs once per start; where the probe cannot
 * go on (it did something more before the start's row came, or the start failed), it goes no
 * further, and the run is what it always was.
 */
const counts = { before: 0, after: 0, ran: new Map<string, number>() };
const reset = () => {
  counts.before = 0;
  counts.after = 0;
  counts.ran.clear();
};
const step = (name: string) =>
  defineAction({
    name,
    run: async (input: number) => {
      counts.ran.set(name, (counts.ran.get(name) ?? 0) + 1);
      return input + 1;
    },
  });
const [one, two, three] = [step('probe-goes-on-one'), step('probe-goes-on-two'), step('probe-goes-on-three')];

const threeSteps = defineFlow({
  name: 'probe-goes-on-three',
  version: 1,
  run: async (ctx, n: number) => {
    counts.before += 1;
    const a = await ctx.action(one, n);
    const b = await ctx.action(two, a);
    counts.after += 1;
    return ctx.action(three, b);
  },
});
// Asks for a second step before the first one's claim is written: the probe stops there (ADR 0048).
const twoAtOnce = defineFlow({
  name: 'probe-goes-on-two-at-once',
  version: 1,
  run: async (ctx, n: number) => {
    counts.before += 1;
    const [a, b] = await Promise.all([ctx.action(one, n), ctx.action(two, n)]);
    counts.after += 1;
    return a + b;
  },
});
const flows = [threeSteps, twoAtOnce];
const actions = [one, two, three];

describe(`a start's pool goes on with the replay its probe holds (${testDbKind()})`, () => {
  const pool = useEngineWithPool();

  it('runs the code before the first step once, each step once, and records the history it always did', async () => {
    reset();
    const { engine } = await pool.start({ flows, actions });
    const db = pool.db();
    const { runId } = await engine.startFlow(threeSteps, 1);
    const run = await finished(db, runId);
    expect([run.status, run.output]).toEqual(['Completed', 4]);
    // Before ADR 0097 the probe ran it, then the pool's replay again: 2.
    expect(counts.before).toBe(1);
    expect(counts.after).toBe(1);
    expect(Object.fromEntries(counts.ran)).toEqual({
      'probe-goes-on-one': 1,
      'probe-goes-on-two': 1,
      'probe-goes-on-three': 1,
    });
    const steps = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    expect(steps.map((s) => [s.sequence, s.name, s.status, s.attempts, s.output])).toEqual([
      [1, 'probe-goes-on-one', 'Completed', 1, 2],
      [2, 'probe-goes-on-two', 'Completed', 1, 3],
      [3, 'probe-goes-on-three', 'Completed', 1, 4],
    ]);
    expect(await stepHistory(db, runId)).toEqual(completedStepsHistory(3));
  });

  it('many starts at once: each run goes on from its own probe, none from another', async () => {
    reset();
    const { engine } = await pool.start({ flows, actions, config: { worker: { concurrency: 4 } } });
    const db = pool.db();
    const started = await Promise.all(Array.from({ length: 12 }, (_, n) => engine.startFlow(threeSteps, n * 10)));
    const runs = await Promise.all(started.map(({ runId }) => finished(db, runId)));
    expect(runs.map((r) => [r.status, r.output])).toEqual(
      Array.from({ length: 12 }, (_, n) => ['Completed', n * 10 + 3]),
    );
    // Each start's code before its first step ran once: a start the pool kept a slot for went on from its
    // probe; one that went through the queue (no slot was free) has no probe, and its replay ran it.
    expect(counts.before).toBe(12);
    expect(counts.after).toBe(12);
    expect(counts.ran.get('probe-goes-on-one')).toBe(12);
  });

  it('a probe that asked for a second step first goes no further: the pool replays the code afresh, each step once', async () => {
    reset();
    const { engine } = await pool.start({ flows, actions });
    const db = pool.db();
    const { runId } = await engine.startFlow(twoAtOnce, 5);
    const run = await finished(db, runId);
    expect([run.status, run.output]).toEqual(['Completed', 12]);
    // The probe's run of the code, then the pool's from its first line.
    expect(counts.before).toBe(2);
    expect(counts.after).toBe(1);
    expect(Object.fromEntries(counts.ran)).toEqual({ 'probe-goes-on-one': 1, 'probe-goes-on-two': 1 });
  });

  it('a start that fails drops its probe: the step it held never runs, the code after it never goes on', async () => {
    reset();
    const { engine } = await pool.start({ flows, actions });
    const db = pool.db();
    const { runId } = await engine.startFlow(threeSteps, 1, { businessKey: 'probe-goes-on-key' });
    await finished(db, runId);
    await expect(engine.startFlow(threeSteps, 100, { businessKey: 'probe-goes-on-key' })).rejects.toSatisfy(
      (err: unknown) => err instanceof EngineError && err.code === 'duplicate_business_key',
    );
    // Another run, started and finished after the refused one: by then its held replay had every
    // chance to go on, had it not been dropped.
    const { runId: after } = await engine.startFlow(threeSteps, 1);
    await finished(db, after);
    expect(counts.before).toBe(3);
    expect(counts.after).toBe(2);
    expect(counts.ran.get('probe-goes-on-one')).toBe(2);
    expect(await db.prisma.flowRun.count({ where: { business_key: 'probe-goes-on-key' } })).toBe(1);
  });
});
