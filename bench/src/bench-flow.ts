import { defineAction, defineFlow } from '@sagaflow/engine';

/** Steps per run of {@link createBenchFlow}'s flow. */
export const stepsPerFlow = 3;

export interface BenchFlow {
  readonly flow: ReturnType<typeof defineThreeSteps>;
  readonly action: ReturnType<typeof defineNoop>;
  /** Time spent inside the action's body, summed over calls. */
  readonly actionTime: { calls: number; ms: number };
}

/**
 * The measured workload: a flow of three sequential no-op actions, so everything measured is the
 * engine's own cost. Fresh definitions per engine keep each phase's action timer separate.
 */
export function createBenchFlow(): BenchFlow {
  const actionTime = { calls: 0, ms: 0 };
  const action = defineNoop(actionTime);
  return { flow: defineThreeSteps(action), action, actionTime };
}

function defineNoop(time: { calls: number; ms: number }) {
  return defineAction({
    name: 'bench.noop',
    run: async (input: { n: number; step: number }) => {
      const startedAt = performance.now();
      const output = { n: input.n, step: input.step };
      time.calls += 1;
      time.ms += performance.now() - startedAt;
      return output;
    },
  });
}

function defineThreeSteps(noop: ReturnType<typeof defineNoop>) {
  return defineFlow({
    name: 'bench.three-steps',
    version: 1,
    run: async (ctx, input: { n: number }) => {
      const first = await ctx.action(noop, { n: input.n, step: 1 });
      const second = await ctx.action(noop, { n: first.n, step: 2 });
      return ctx.action(noop, { n: second.n, step: 3 });
    },
  });
}
