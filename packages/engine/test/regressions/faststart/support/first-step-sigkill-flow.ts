import { defineAction, defineFlow } from '../../../../src/index.ts';
import { fusedSigkillConfig } from '../../fused-steps/support/fused-sigkill-flow.ts';

/**
 * The flow of sigkill-after-start-with-first-step.pg.test.ts, shared by the test and its child worker
 * process: three steps back to back, the first written with the run by the start's own statement
 * (ADR 0048). Each process brings its own `first` (same name): the child's never returns.
 */
export function firstStepSigkillFlow(first: () => Promise<string>, ran: string[] = []) {
  const step = (name: string, run: () => Promise<string>) =>
    defineAction({
      name,
      run: async () => {
        ran.push(name);
        return run();
      },
    });
  const one = step('faststart-kill-first', first);
  const two = step('faststart-kill-second', async () => 'second');
  const three = step('faststart-kill-third', async () => 'third');
  const flow = defineFlow({
    name: 'faststart-sigkill',
    version: 1,
    run: async (ctx) => [await ctx.action(one, null), await ctx.action(two, null), await ctx.action(three, null)],
  });
  return { flow, actions: [one, two, three] };
}

/**
 * The fused-steps windows (a step reclaimable a second after its claim, a one-second job lease), with
 * one slot per pool. With more, the child's own pool claimed its job again once that lease ran out
 * and reclaimed the step it was still running (attempt 2, 3, ... a second apart), so the test passed
 * only if it read the step and killed the child within a second of the start: not on a loaded
 * machine. With one slot the pool that holds the step claims nothing more until it ends; the same
 * holds for this process's worker, whose replay must not be overtaken by a second one of its own.
 */
export const firstStepSigkillConfig = {
  ...fusedSigkillConfig,
  worker: { ...fusedSigkillConfig.worker, concurrency: 1 },
} as const;
