import { defineAction, defineFlow } from '@sagaflow/engine';

/** A tiny order flow for demo traffic: three steps, the middle one flaky so retries show. */
export const chargeCard = defineAction({
  name: 'demo.charge-card',
  run: async (input: { orderId: string; amount: number }) => ({
    chargeId: `ch_${input.orderId}`,
    amount: input.amount,
  }),
});

export const reserveStock = defineAction({
  name: 'demo.reserve-stock',
  retry: { maxAttempts: 3 },
  run: async (input: { orderId: string; failRate: number }) => {
    if (Math.random() < input.failRate) throw new Error('warehouse timed out');
    return { reservationId: `rs_${input.orderId}` };
  },
});

export const shipOrder = defineAction({
  name: 'demo.ship-order',
  run: async (input: { orderId: string }) => ({ trackingNumber: `TRK-${input.orderId.slice(0, 8).toUpperCase()}` }),
});

export const orderFlow = defineFlow({
  name: 'demo.order',
  version: 1,
  run: async (ctx, input: { orderId: string; amount: number; failRate?: number }) => {
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
