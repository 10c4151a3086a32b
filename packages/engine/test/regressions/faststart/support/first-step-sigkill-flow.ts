import { defineAction, defineFlow } from '../../../../src/index.ts';

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
