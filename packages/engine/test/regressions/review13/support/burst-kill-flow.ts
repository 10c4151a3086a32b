import { defineAction, defineFlow } from '../../../../src/index.ts';

/**
 * The flow of sigkill-during-start-bursts.pg.test.ts, shared by the test and its child worker: two
 * steps back to back. Each process brings its own `first` (same name): in the child, an even run's
 * first step never returns, so the kill finds starts, claims, transitions and finishes all in flight.
 */
export function burstKillFlow(first: (n: number) => Promise<number>) {
  const one = defineAction({ name: 'review13-kill-first', run: first });
  const two = defineAction({ name: 'review13-kill-second', run: async (n: number) => n * 10 });
  const flow = defineFlow({
    name: 'review13-burst-kill',
    version: 1,
    run: async (ctx, n: number) => [await ctx.action(one, n), await ctx.action(two, n)],
  });
  return { flow, actions: [one, two] };
}
