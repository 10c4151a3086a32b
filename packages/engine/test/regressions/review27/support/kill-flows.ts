import type { Json } from '../../../../src/definitions/define-action.ts';
import { defineAction, defineFlow } from '../../../../src/index.ts';

/**
 * Review 27, the SIGKILL case. A parent that books, then `await Promise.all([ctx.child(A), ctx.action(side)])`;
 * child A waits for the signal 'go' and returns. `ran(name)` is called as each action starts; `side` then
 * awaits `sideWaits()` before it returns.
 */
export function killFlows(ran: (name: string) => void, sideWaits: () => Promise<void>) {
  const tag = 'review27-kill';
  const book = defineAction({
    name: `${tag}-book`,
    run: async () => {
      ran('book');
      return 'booked';
    },
  });
  const side = defineAction({
    name: `${tag}-side`,
    run: async (input: Json) => {
      ran('side');
      await sideWaits();
      return `side:${JSON.stringify(input)}`;
    },
  });
  const childA = defineFlow({
    name: `${tag}-A`,
    version: 1,
    run: async (ctx, i: string): Promise<Json> => [i, await ctx.awaitSignal('go', { timeoutSeconds: 3600 })],
  });
  const parent = defineFlow({
    name: `${tag}-parent`,
    version: 1,
    run: async (ctx): Promise<Json> => {
      await ctx.action(book, null);
      return Promise.all([ctx.child(childA, 'a'), ctx.action(side, null).run()]);
    },
  });
  return { flows: [parent, childA], actions: [book, side], parent, childA, side };
}
