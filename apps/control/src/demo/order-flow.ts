import { defineAction, defineFlow } from '@sagaflow/engine';
import { z } from 'zod';

/** A tiny order flow for demo traffic: three steps, the middle one flaky so retries show. */
export const chargeCard = defineAction({
  name: 'demo.charge-card',
  input: z.object({ orderId: z.string().min(1), amount: z.number().nonnegative() }),
  output: z.object({ chargeId: z.string().min(1), amount: z.number().nonnegative() }),
  run: async (input) => ({
    chargeId: `ch_${input.orderId}`,
    amount: input.amount,
  }),
});

export const reserveStock = defineAction({
  name: 'demo.reserve-stock',
  retry: { maxAttempts: 3 },
  input: z.object({ orderId: z.string().min(1), failRate: z.number().min(0).max(1) }),
  output: z.object({ reservationId: z.string().min(1) }),
  run: async (input) => {
    if (Math.random() < input.failRate) throw new Error('warehouse timed out');
    return { reservationId: `rs_${input.orderId}` };
  },
});

export const shipOrder = defineAction({
  name: 'demo.ship-order',
  input: z.object({ orderId: z.string().min(1) }),
  output: z.object({ trackingNumber: z.string().min(1) }),
  run: async (input) => ({ trackingNumber: `TRK-${input.orderId.slice(0, 8).toUpperCase()}` }),
});

export const orderFlow = defineFlow({
  name: 'demo.order',
  version: 1,
  // Declared, so `runs.start` of "just a string" is a 400 naming the field, not a run that charges `ch_undefined`.
  input: z.object({
    orderId: z.string().min(1),
    amount: z.number().nonnegative(),
    failRate: z.number().min(0).max(1).optional(),
  }),
  run: async (ctx, input) => {
    const charge = await ctx.action(chargeCard, { orderId: input.orderId, amount: input.amount });
    const reservation = await ctx.action(reserveStock, { orderId: input.orderId, failRate: input.failRate ?? 0 });
    const shipment = await ctx.action(shipOrder, { orderId: input.orderId });
    return {
      chargeId: charge.chargeId,
      reservationId: reservation.reservationId,
      trackingNumber: shipment.trackingNumber,
    };
  },
});
