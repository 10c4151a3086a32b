import { defineAction, defineFlow } from '../../../../src/index.ts';

/**
 * The flows of terminate-and-die-before-the-children.pg.test.ts, shared by the test and its operator
 * process: a parent that waits for one 'propagate' child of two steps. `work` is the test's own
 * (gated); the operator process never runs a step.
 */
export function terminateTreeFlows(work: (step: 'one' | 'two') => Promise<string>) {
  const one = defineAction({ name: 'review20-tree-one', run: () => work('one') });
  const two = defineAction({ name: 'review20-tree-two', run: () => work('two') });
  const child = defineFlow({
    name: 'review20-tree-child',
    version: 1,
    run: async (ctx) => [await ctx.action(one, null), await ctx.action(two, null)],
  });
  const parent = defineFlow({
    name: 'review20-tree-parent',
    version: 1,
    run: async (ctx) => ctx.child(child, null),
  });
  return { parent, child, actions: [one, two] };
}
