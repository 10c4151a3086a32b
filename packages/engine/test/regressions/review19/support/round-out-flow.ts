import { defineAction, defineFlow } from '../../../../src/index.ts';

/**
 * The flow of complete-step-with-the-round-owner-killed.pg.test.ts, shared by the test and its child
 * worker process: a ctx.parallel block of two branches, then one more step. Each process brings its
 * own branches (same names): the child's never return, the test's complete.
 */
export function roundOutFlow(branch: (name: 'x' | 'y') => Promise<string>) {
  const x = defineAction({ name: 'review19-kill-x', run: () => branch('x') });
  const y = defineAction({ name: 'review19-kill-y', run: () => branch('y') });
  const after = defineAction({ name: 'review19-kill-after', run: async () => 'after' });
  const flow = defineFlow({
    name: 'review19-round-owner-killed',
    version: 1,
    run: async (ctx) => {
      const both = await ctx.parallel([ctx.action(x, null), ctx.action(y, null)]);
      return [both, await ctx.action(after, null)];
    },
  });
  return { flow, actions: [x, y, after] };
}

/** Small worker windows, so the child's heartbeat and pool are quick; reclaim stays off (the default). */
export const roundOutConfig = {
  worker: { poll_interval_ms: 25, heartbeat_interval_ms: 100, dead_after_seconds: 2 },
  logging: { anomaly_level: null },
} as const;
