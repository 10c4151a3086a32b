import { defineAction, defineFlow } from '@sagaflow/engine';
import { z } from 'zod';
import { chargeCard, reserveStock } from './order-flow.ts';
import { ticketFlow } from './ticket-flow.ts';

export const packMerch = defineAction({
  name: 'demo.pack-merch',
  input: z.object({ orderId: z.string().min(1) }),
  output: z.object({ parcelId: z.string().min(1) }),
  run: async (input) => ({ parcelId: `PCL-${input.orderId.slice(0, 8).toUpperCase()}` }),
});

/**
 * A festival order, the demo's run with every kind of step: charge the card, note when it was
 * placed (a recorded value), get the ticket from a child flow (demo.ticket, which waits for the box
 * office), then pack the merchandise and reserve the stock side by side (a parallel block).
 */
export const festivalOrderFlow = defineFlow({
  name: 'demo.festival-order',
  version: 1,
  input: z.object({ orderId: z.string().min(1), amount: z.number().nonnegative() }),
  run: async (ctx, input) => {
    const charge = await ctx.action(chargeCard, { orderId: input.orderId, amount: input.amount });
    const placedAt = ctx.now().toISOString();
    const ticket = await ctx.child(ticketFlow, { orderId: input.orderId });
    const [parcel, reservation] = await ctx.parallel([
      ctx.action(packMerch, { orderId: input.orderId }),
      ctx.action(reserveStock, { orderId: input.orderId, failRate: 0 }),
    ] as const);
    return {
      chargeId: charge.chargeId,
      placedAt,
      ticket,
      parcelId: parcel.parcelId,
      reservationId: reservation.reservationId,
    };
  },
});
