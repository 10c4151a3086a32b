import { defineAction, defineFlow } from '../../../../src/index.ts';

/**
 * The flow of a-frozen-worker-that-resumes-is-not-gone.pg.test.ts, shared by the test and its child
 * worker process: one long charge step (the child's never returns while the test looks), then a ship step.
 */
export function frozenFlow(run: () => Promise<{ by: string }>) {
  const charge = defineAction({ name: 'r50-frozen-charge', run });
  const ship = defineAction({ name: 'r50-frozen-ship', run: async () => 'shipped' });
  const flow = defineFlow({
    name: 'r50-frozen',
    version: 1,
    run: async (ctx) => {
      const charged = await ctx.action(charge, null);
      await ctx.action(ship, null);
      return charged;
    },
  });
  return { flow, actions: [charge, ship] };
}

/** Small worker windows so a frozen worker counts as gone within seconds; reclaim stays off (the default). */
export const frozenConfig = {
  worker: { poll_interval_ms: 25, heartbeat_interval_ms: 100, dead_after_seconds: 2 },
  logging: { anomaly_level: null },
} as const;
