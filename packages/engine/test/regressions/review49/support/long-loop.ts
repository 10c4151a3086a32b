import { defineAction } from '../../../../src/definitions/define-action.ts';
import { defineFlow } from '../../../../src/definitions/define-flow.ts';

/** Review 49: a long run shared by the test and its child worker (the same names, the same code). */
export const hang = { at: -1 };

export const loopStep = defineAction({
  name: 'r49.loop-step',
  run: async (i: { i: number }) => {
    if (i.i === hang.at) {
      process.stdout.write(`at ${i.i + 1}\n`);
      await new Promise(() => undefined);
    }
    return { i: i.i };
  },
});

export const longLoop = defineFlow({
  name: 'r49.long-loop',
  version: 1,
  run: async (ctx, input: { n: number }) => {
    let sum = 0;
    for (let i = 0; i < input.n; i++) sum += (await ctx.action(loopStep, { i }).reclaimStaleAfter(1).run()).i;
    return { sum };
  },
});

export const fastConfig = {
  worker: { poll_interval_ms: 20, lease_seconds: 2, heartbeat_interval_ms: 200, dead_after_seconds: 1 },
  logging: { anomaly_level: null },
};
