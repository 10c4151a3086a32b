import { defineAction, defineFlow } from '@sagaflow/engine';
import type { BenchFlow } from './bench-flow.ts';

/** When one call of the bench's action began and returned (performance.now()), for flow input `n` and step `step`. */
export type ActionCall = (n: number, step: number, inAt: number, outAt: number) => void;

/**
 * The bench's flow (three sequential no-op actions, {@link BenchFlow}) with each action call's
 * entry and return reported to `onCall`: the moments the engine hands a step to the action and gets
 * its output back are where a run's Node time ends and its next statement's wait begins, and only
 * the action's own body sees them from outside the engine.
 */
export function createTracedBenchFlow(onCall: ActionCall): BenchFlow {
  const actionTime = { calls: 0, ms: 0 };
  const action = defineAction({
    name: 'bench.noop',
    run: async (input: { n: number; step: number }) => {
      const inAt = performance.now();
      const output = { n: input.n, step: input.step };
      const outAt = performance.now();
      actionTime.calls += 1;
      actionTime.ms += outAt - inAt;
      onCall(input.n, input.step, inAt, outAt);
      return output;
    },
  });
  const flow = defineFlow({
    name: 'bench.three-steps',
    version: 1,
    run: async (ctx, input: { n: number }) => {
      const first = await ctx.action(action, { n: input.n, step: 1 });
      const second = await ctx.action(action, { n: first.n, step: 2 });
      return ctx.action(action, { n: second.n, step: 3 });
    },
  });
  return { flow, action, actionTime };
}
