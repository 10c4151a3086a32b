import { defineAction, defineFlow } from '../../../../src/index.ts';

/**
 * The flow of sigkill-between-the-claim-and-the-first-step.pg.test.ts, shared by the test and its
 * child worker: `beforeFirstStep` runs in the flow's code before its first step (the child's says
 * where it is, then never returns); each action counts its side effects in `ran`.
 */
export function killFlow(beforeFirstStep: (runId: string) => Promise<void>, ran: string[] = []) {
  const step = (name: string) =>
    defineAction({
      name,
      run: async () => {
        ran.push(name);
        return name;
      },
    });
  const one = step('r28-kill-one');
  const two = step('r28-kill-two');
  const flow = defineFlow({
    name: 'r28-kill',
    version: 1,
    run: async (ctx) => {
      await beforeFirstStep(ctx.runId);
      return [await ctx.action(one, null), await ctx.action(two, null)];
    },
  });
  return { flow, actions: [one, two] };
}

export const killConfig = { worker: { concurrency: 2, lease_seconds: 1, poll_interval_ms: 50 } } as const;
