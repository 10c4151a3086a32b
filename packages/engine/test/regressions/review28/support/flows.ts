import { defineAction, defineFlow } from '../../../../src/index.ts';

/** Side effects seen, by the run's tag (its input), then by step sequence. */
export const effects = new Map<string, Map<number, number>>();
export const effectsOf = (tag: string) => effects.get(tag) ?? new Map<number, number>();
const record = (tag: string, seq: number) => {
  const m = effects.get(tag) ?? new Map<number, number>();
  m.set(seq, (m.get(seq) ?? 0) + 1);
  effects.set(tag, m);
};

export const stepOne = defineAction({
  name: 'r28-step-one',
  run: async (input: { tag: string }) => {
    record(input.tag, 1);
    return { one: input.tag };
  },
});
export const stepTwo = defineAction({
  name: 'r28-step-two',
  run: async (input: { tag: string }) => {
    record(input.tag, 2);
    return { two: input.tag };
  },
});
/** Two steps one after the other; the input is the tag its side effects are counted under. */
export const twoSteps = defineFlow({
  name: 'r28-two-steps',
  version: 1,
  run: async (ctx, tag: string) => {
    await ctx.action(stepOne, { tag });
    return ctx.action(stepTwo, { tag });
  },
});
/** A flow only some workers have. */
export const otherFlow = defineFlow({
  name: 'r28-other',
  version: 1,
  run: async (ctx, tag: string) => ctx.action(stepOne, { tag }),
});
export const actions = [stepOne, stepTwo];
