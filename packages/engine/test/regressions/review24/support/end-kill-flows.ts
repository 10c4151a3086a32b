import type { Json } from '../../../../src/definitions/define-action.ts';
import { defineAction, defineFlow, NonRetryableError } from '../../../../src/index.ts';

/**
 * Review 24. The flows of sigkill-right-after-the-parents-end.pg.test.ts, the same in the test and in its
 * child worker process: a parent that books, then awaits `Promise.all([ctx.child(A), ctx.action(side)])`.
 * `side` waits for `sideGo` and then fails for good; A's only action waits for `workAGo`. Every action
 * execution is reported to `ran`.
 */
export function endKillFlows(ran: (name: string) => void, sideGo: () => Promise<void>, workAGo: () => Promise<void>) {
  const book = defineAction({
    name: 'review24-endkill-book',
    run: async () => {
      ran('book');
      return 'booked';
    },
  });
  const side = defineAction({
    name: 'review24-endkill-side',
    run: async (): Promise<Json> => {
      ran('side');
      await sideGo();
      throw new NonRetryableError('side declined');
    },
  });
  const workA = defineAction({
    name: 'review24-endkill-work-a',
    run: async (i: Json) => {
      ran('work-a');
      await workAGo();
      return i;
    },
  });
  const childA = defineFlow({
    name: 'review24-endkill-A',
    version: 1,
    run: async (ctx, i: string) => ctx.action(workA, i),
  });
  const parent = defineFlow({
    name: 'review24-endkill-parent',
    version: 1,
    run: async (ctx): Promise<Json> => {
      await ctx.action(book, null);
      return Promise.all([ctx.child(childA, 'a'), ctx.action(side, null).run()]);
    },
  });
  return { parent, flows: [parent, childA], actions: [book, side, workA] };
}
