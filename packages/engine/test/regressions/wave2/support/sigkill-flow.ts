import { defineAction, defineFlow } from '../../../../src/index.ts';

/**
 * The flow of dead-owner-sigkill.pg.test.ts, shared by the test and its child worker process: one
 * charge step, then a ship step. Each process brings its own `charge` (same name): the child's
 * never returns, the test's completes.
 */
export function sigkillFlow(run: () => Promise<{ by: string }>) {
  const charge = defineAction({ name: 'sigkill-charge', run });
  const ship = defineAction({ name: 'sigkill-ship', run: async () => 'shipped' });
  const flow = defineFlow({
    name: 'dead-owner-sigkill',
    version: 1,
    run: async (ctx) => {
      const charged = await ctx.action(charge, null);
      await ctx.action(ship, null);
      return charged;
    },
  });
  return { flow, actions: [charge, ship] };
}

/** Small worker windows so a SIGKILLed worker is gone within seconds; reclaim stays off (the default). */
export const sigkillConfig = {
  worker: { poll_interval_ms: 25, heartbeat_interval_ms: 100, dead_after_seconds: 2 },
  logging: { anomaly_level: null },
} as const;
