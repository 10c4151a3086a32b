import { defineAction, defineFlow } from '../../../../src/index.ts';
import { oneSlotFusedSigkillConfig } from '../../fused-steps/support/fused-sigkill-flow.ts';

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
 * The fused-steps windows with one slot per pool (ADR 0078): the child's pool holding step 1 claims
 * nothing more until it ends; the same holds for this process's worker, whose replay must not be
 * overtaken by a second one of its own.
 */
export const firstStepSigkillConfig = oneSlotFusedSigkillConfig;
