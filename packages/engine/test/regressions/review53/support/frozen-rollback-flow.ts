import { defineAction, defineFlow } from '../../../../src/index.ts';

/**
 * The saga of a-rollback-whose-worker-is-frozen-says-why-and-ends.pg.test.ts, shared by the test and its
 * child worker: three bookings, a refusal, then the rollback; `undo` is the compensation's code (the
 * child's waits for the test's word on its second one).
 */
export function frozenRollbackFlow(undo: (i: number) => Promise<number>) {
  const book = defineAction({ name: 'r53-frozen-book', run: async (i: number) => i });
  const refuse = defineAction({
    name: 'r53-frozen-refuse',
    run: async () => {
      throw new Error('no seats left');
    },
  });
  const unbook = defineAction({ name: 'r53-frozen-unbook', run: undo });
  const flow = defineFlow({
    name: 'r53-frozen-saga',
    version: 1,
    run: async (ctx) => {
      try {
        for (let i = 1; i <= 3; i++) await ctx.action(book, i).compensateWith(unbook, (o) => o);
        await ctx.action(refuse, null);
        return 'booked';
      } catch (err) {
        await ctx.compensate();
        throw err;
      }
    },
  });
  return { flow, actions: [book, refuse, unbook] };
}

export const frozenRollbackConfig = {
  worker: { poll_interval_ms: 25, heartbeat_interval_ms: 100, dead_after_seconds: 2 },
  logging: { anomaly_level: null },
} as const;
