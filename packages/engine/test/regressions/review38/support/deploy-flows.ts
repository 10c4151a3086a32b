// The flow code of review 38's deploys: the same flow name under two versions, and a flow that branches
// on ctx.random(), shared by the child worker processes and the tests that start and read the runs.
import { defineAction, defineFlow } from '../../../../src/index.ts';

const act = (name: string) => defineAction({ name, run: async (input: { n: number }) => ({ did: name, n: input.n }) });

export const depA = act('r38-a');
export const depB = act('r38-b');
export const depC = act('r38-c');
export const heads = act('r38-heads');
export const tails = act('r38-tails');
export const otherStep = act('r38-other');
export const deployActions = [depA, depB, depC, heads, tails, otherStep];

/** Version 1: a, wait for `go`, then b. */
export const deployV1 = defineFlow({
  name: 'r38-deploy',
  version: 1,
  run: async (ctx) => {
    await ctx.action(depA, { n: 1 });
    await ctx.awaitSignal('go', { timeoutSeconds: 3600 });
    await ctx.action(depB, { n: 2 });
    return { code: 1 };
  },
});

/** Version 2 of the same flow: a, wait for `go`, then c (b is gone). */
export const deployV2 = defineFlow({
  name: 'r38-deploy',
  version: 2,
  run: async (ctx) => {
    await ctx.action(depA, { n: 1 });
    await ctx.awaitSignal('go', { timeoutSeconds: 3600 });
    await ctx.action(depC, { n: 3 });
    return { code: 2 };
  },
});

/** Takes its values before a wait and branches on them after it: a replay must take the same branch. */
export const coinFlow = defineFlow({
  name: 'r38-coin',
  version: 1,
  run: async (ctx) => {
    const roll = ctx.random();
    const when = ctx.now();
    const id = ctx.uuid();
    await ctx.awaitSignal('go', { timeoutSeconds: 3600 });
    const side = roll < 0.5 ? 'heads' : 'tails';
    await ctx.action(side === 'heads' ? heads : tails, { n: 1 });
    return { roll, when: when.toISOString(), id, side };
  },
});

/** A flow that only a worker of another service has: the worker without r38-deploy runs this one. */
export const otherFlow = defineFlow({
  name: 'r38-other',
  version: 1,
  run: async (ctx) => {
    await ctx.action(otherStep, { n: 1 });
    return null;
  },
});
