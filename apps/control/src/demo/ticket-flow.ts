import { defineAction, defineFlow, isFlowError } from '@sagaflow/engine';
import { z } from 'zod';

export const holdSeat = defineAction({
  name: 'demo.hold-seat',
  input: z.object({ orderId: z.string().min(1) }),
  output: z.object({ seatId: z.string().min(1) }),
  run: async (input) => ({ seatId: `SEAT-${input.orderId.slice(0, 8).toUpperCase()}` }),
});

export const freeSeat = defineAction({
  name: 'demo.free-seat',
  retry: { maxAttempts: 3 },
  run: async (input: { seatId: string }) => ({ freed: input.seatId }),
});

/** How long a held seat waits for the box office to issue its ticket. */
export const issueWindowSeconds = 600;
/** How long a cancelled hold waits for the box office to say the seat is back on sale. */
export const releaseWindowSeconds = 240;

/**
 * A ticket hold, started as a child of a festival order: hold a seat and wait for the box office's
 * `issued` signal (not issued in time: free the seat). A cancellation that arrives while it waits is
 * cleaned up the careful way: the hold waits, inside the cancellation's cleanup window, for the box
 * office's `released` signal before freeing the seat, so a seat is never sold twice.
 */
export const ticketFlow = defineFlow({
  name: 'demo.ticket',
  version: 1,
  input: z.object({ orderId: z.string().min(1) }),
  run: async (ctx, input) => {
    const { seatId } = await ctx
      .action(holdSeat, { orderId: input.orderId })
      .compensateWith(freeSeat, (o) => ({ seatId: o.seatId }));
    try {
      if ((await ctx.awaitSignal('issued', { timeoutSeconds: issueWindowSeconds })) === null) {
        await ctx.compensate();
        return { status: 'not-issued' as const, seatId };
      }
      return { status: 'issued' as const, seatId };
    } catch (err) {
      if (!isFlowError(err, 'cancelled')) throw err;
      await ctx.awaitSignal('released', { timeoutSeconds: releaseWindowSeconds });
      await ctx.compensate();
      throw err;
    }
  },
});

export const ticketActions = [holdSeat, freeSeat];
