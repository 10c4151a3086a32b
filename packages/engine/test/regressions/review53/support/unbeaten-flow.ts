import { defineAction, defineFlow } from '../../../../src/index.ts';

/**
 * The flow of a-step-of-a-worker-that-never-beat-is-judged.pg.test.ts, shared by the test and its child
 * worker: one long charge step (the child's never returns), then a ship step.
 */
export function unbeatenFlow(run: () => Promise<string>) {
  const charge = defineAction({ name: 'r53-unbeaten-charge', run });
  const ship = defineAction({ name: 'r53-unbeaten-ship', run: async () => 'shipped' });
  const flow = defineFlow({
    name: 'r53-unbeaten',
    version: 1,
    run: async (ctx) => {
      const charged = await ctx.action(charge, null);
      await ctx.action(ship, null);
      return charged;
    },
  });
  return { flow, actions: [charge, ship] };
}

/** Small windows: a worker counts as gone 2 s after its last beat; reclaim stays off (the default). */
export const unbeatenConfig = {
  worker: { poll_interval_ms: 25, heartbeat_interval_ms: 100, dead_after_seconds: 2 },
  logging: { anomaly_level: null },
} as const;
