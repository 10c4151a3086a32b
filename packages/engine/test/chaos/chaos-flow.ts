import { defineAction, defineFlow, NonRetryableError } from '../../src/index.ts';

/** Which step (if any) refuses the run for business reasons: drawn at random when the run starts. */
// A type alias, not an interface: it must be assignable to Json (interfaces carry no index signature).
export type ChaosInput = {
  n: number;
  refusedAt: string | null;
};

/**
 * A 4-step flow with a compensation per step; a random ~15% of runs are refused at a random step.
 * Each step takes 100-300 ms, like a call to another service: the 500 runs last about a minute, so
 * the killer reaches workers in the middle of their steps many times over.
 */
const pause = () => new Promise((r) => setTimeout(r, 100 + Math.floor(Math.random() * 200)));
const step = (name: string) =>
  defineAction({
    name,
    retry: { maxAttempts: 3, backoff: { initialMs: 50, maxMs: 200 } },
    run: async (i: ChaosInput) => {
      await pause();
      if (name === i.refusedAt) throw new NonRetryableError(`run ${i.n} is refused at ${name}`);
      return { n: i.n, step: name };
    },
  });
const undo = (name: string) =>
  defineAction({
    name,
    retry: { maxAttempts: 5, backoff: { initialMs: 50, maxMs: 200 } },
    run: async (i: ChaosInput) => {
      await pause();
      return { undone: i.n };
    },
  });

const steps = [step('chaos-1'), step('chaos-2'), step('chaos-3'), step('chaos-4')];
const undos = [undo('undo-1'), undo('undo-2'), undo('undo-3'), undo('undo-4')];
export const chaosActions = [...steps, ...undos];

export const chaosFlow = defineFlow({
  name: 'chaos',
  version: 1,
  run: async (ctx, input: ChaosInput) => {
    try {
      for (const [i, s] of steps.entries()) {
        const u = undos[i];
        if (!u) throw new Error('chaos actions missing');
        await ctx.action(s, input).compensateWith(u, () => input);
      }
      return { n: input.n };
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

/** Reclaim on with short windows, so a killed worker's rows come back within seconds. */
export const chaosConfig = {
  worker: { concurrency: 4, poll_interval_ms: 25, lease_seconds: 3 },
  reclaim: { actions: { enabled: true, after_seconds: 3 }, compensations: { enabled: true, after_seconds: 3 } },
  logging: { anomaly_level: null },
} as const;
