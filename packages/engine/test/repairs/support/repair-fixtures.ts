import { z } from 'zod';
import { defineAction, defineFlow, defineProcess, type Json } from '../../../src/index.ts';

/** Switches the tests flip: an action failing, the code of a flow changing under its record. */
export const switches = { flakyFails: true, variant: 'a' as 'a' | 'b', poisonFails: true };

export const stepA = defineAction({ name: 'rep-a', run: async () => ({ did: 'a' }) });
export const undoA = defineAction({ name: 'rep-undo-a', run: async () => null });
export const stepB = defineAction({ name: 'rep-b', run: async () => ({ did: 'b' }) });
export const stepC = defineAction({ name: 'rep-c', run: async () => ({ did: 'c' }) });
export const flaky = defineAction({
  name: 'rep-flaky',
  retry: { maxAttempts: 3, backoff: { initialMs: 3_600_000, maxMs: 3_600_000, jitter: false } },
  run: async () => {
    if (switches.flakyFails) throw new Error('the downstream service is down');
    return { ok: true };
  },
});
export const held = defineAction({ name: 'rep-held', run: async () => ({ from: 'worker' }) });

/** Does A (undone by undo-A), waits for `go`, does B; compensates whatever stops it. */
export const waiter = defineFlow({
  name: 'rep-waiter',
  version: 1,
  run: async (ctx) => {
    try {
      await ctx
        .action(stepA, null)
        .compensateWith(undoA, () => null)
        .run();
      const go = await ctx.awaitSignal<Json>('go', { timeoutSeconds: 3600 });
      await ctx.action(stepB, null).run();
      return go;
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

/** One flaky step, retried an hour later. */
export const retrying = defineFlow({
  name: 'rep-retrying',
  version: 1,
  run: async (ctx) => ctx.action(flaky, null).run(),
});

/** One step whose worker dies after claiming it (the test arms the fault), and returns its output. */
export const holding = defineFlow({
  name: 'rep-holding',
  version: 1,
  run: async (ctx) => ctx.action(held, null).run(),
});

/** A (undone by undo-A), then a step whose worker dies after claiming it (the test arms the fault). */
export const halfDone = defineFlow({
  name: 'rep-half-done',
  version: 1,
  run: async (ctx) => {
    await ctx
      .action(stepA, null)
      .compensateWith(undoA, () => null)
      .run();
    return ctx.action(held, null).run();
  },
});

/** Step 1 is A in variant a and C in variant b: switching the variant blocks the replay of a recorded run. */
export const changing = defineFlow({
  name: 'rep-changing',
  version: 1,
  run: async (ctx) => {
    const first = await ctx.action(switches.variant === 'a' ? stepA : stepC, null).run();
    await ctx.awaitSignal('go', { timeoutSeconds: 3600 });
    return first;
  },
});

export const flows = [waiter, retrying, holding, halfDone, changing];
export const actions = [stepA, undoA, stepB, stepC, flaky, held];

/** A small process: Open → Review (message) → Closed, with a typed operator command and a poison message. */
export const ticket = defineProcess({
  name: 'rep-ticket',
  states: ['Open', 'Review', 'Closed'],
  initial: 'Open',
  final: ['Closed'],
  data: z.object({ key: z.string(), notes: z.array(z.string()) }),
  initialData: (key) => ({ key, notes: [] }),
  messages: {
    Opened: z.object({ key: z.string() }),
    Reviewed: z.object({ key: z.string() }),
    Note: z.object({ key: z.string(), note: z.string() }),
    Reopen: z.object({ key: z.string() }),
  },
  correlate: (m) => m.payload.key,
  on: {
    Opened: [{ from: 'Open', to: 'Open' }],
    Reviewed: [
      {
        from: 'Open',
        to: 'Review',
        then: (d) => ({ emit: [{ type: 'ReviewStarted', destination: 'reviews', payload: { key: d.key } }] }),
      },
    ],
    Reopen: [{ from: 'Review', to: 'Open' }],
    Note: [
      {
        from: 'Open',
        to: 'Open',
        then: (d, p) => {
          if (switches.poisonFails && p.note.startsWith('poison')) throw new Error(`cannot take note "${p.note}"`);
          return { data: { ...d, notes: [...d.notes, p.note] } };
        },
      },
    ],
  },
  operatorInputs: { Close: z.object({ resolution: z.string().min(1) }) },
  operatorCommands: {
    Close: {
      from: ['Review'],
      to: 'Closed',
      then: (d, input) => ({
        data: { ...d, notes: [...d.notes, input.resolution] },
        emit: [{ type: 'TicketClosed', destination: 'reviews', payload: { key: d.key } }],
      }),
    },
  },
});
