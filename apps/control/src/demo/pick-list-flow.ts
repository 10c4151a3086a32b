import { defineAction, defineFlow } from '@sagaflow/engine';
import { z } from 'zod';

export const pickLine = defineAction({
  name: 'demo.pick-line',
  run: async (input: { orderId: string; line: number; pauseMs: number }) => {
    // Walking to the shelf: a pause that lets a page watch the run grow.
    if (input.pauseMs > 0) await new Promise((r) => setTimeout(r, input.pauseMs));
    return { picked: `${input.orderId.slice(0, 8)}-${input.line}` };
  },
});

/** The most lines a pick list takes: a long run, whose page shows its history a page at a time. */
export const maxPickLines = 2000;

/**
 * A warehouse pick list: one step per order line, in order. A run with hundreds of steps, as a
 * bulk order makes them: what the run page's paged history (ADR 0035) is for.
 */
export const pickListFlow = defineFlow({
  name: 'demo.pick-list',
  version: 1,
  input: z.object({
    orderId: z.string().min(1),
    lines: z.number().int().min(1).max(maxPickLines),
    /** How long picking one line takes, in milliseconds (none by default). */
    pauseMs: z.number().int().min(0).max(10_000).default(0),
  }),
  run: async (ctx, input) => {
    for (let line = 1; line <= input.lines; line++)
      await ctx.action(pickLine, { orderId: input.orderId, line, pauseMs: input.pauseMs });
    return { picked: input.lines };
  },
});
