import type { Json } from '../../../../src/definitions/define-action.ts';
import type { StandardSchemaV1 } from '../../../../src/definitions/standard-schema.ts';
import { defineAction, defineFlow } from '../../../../src/index.ts';

/**
 * Review 23. The flows of sigkill-while-a-siblings-start-is-out.pg.test.ts, the same in the test and in
 * its child worker process: a parent that books, then awaits `Promise.all([ctx.child(A), ctx.child(B)])`.
 * B's input check is `checkB`, A's `checkA` (the child process holds them, so the starts stay out); every action
 * execution is reported to `ran`.
 */
export function killFlows(
  checkB: () => Promise<void>,
  ran: (name: string) => void,
  checkA: () => Promise<void> = () => Promise.resolve(),
) {
  const act = (name: string) =>
    defineAction({
      name: `review23-kill-${name}`,
      run: async (input: Json) => {
        ran(name);
        return `${name}:${JSON.stringify(input)}`;
      },
    });
  const book = act('book');
  const workA = act('work-a');
  const workB = act('work-b');
  const checked = (check: () => Promise<void>): StandardSchemaV1<unknown, string> => ({
    '~standard': {
      version: 1,
      vendor: 'review23',
      validate: async (v) => {
        await check();
        return { value: v as string };
      },
    },
  });
  const inputB = checked(checkB);
  const childA = defineFlow({
    name: 'review23-kill-A',
    version: 1,
    input: checked(checkA),
    run: async (ctx, i: string) => ctx.action(workA, i),
  });
  const childB = defineFlow({
    name: 'review23-kill-B',
    version: 1,
    input: inputB,
    run: async (ctx, i: string) => ctx.action(workB, i),
  });
  const parent = defineFlow({
    name: 'review23-kill-parent',
    version: 1,
    run: async (ctx): Promise<Json> => {
      await ctx.action(book, null);
      return Promise.all([ctx.child(childA, 'a'), ctx.child(childB, 'b')]);
    },
  });
  return { parent, flows: [parent, childA, childB], actions: [book, workA, workB] };
}
