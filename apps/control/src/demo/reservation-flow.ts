import { defineAction, defineFlow } from '@sagaflow/engine';
import { z } from 'zod';

export const reserveResource = defineAction({
  name: 'demo.reserve-resource',
  run: async (input: { orderId: string }) => ({ reservationId: `RSV-${input.orderId.slice(0, 8).toUpperCase()}` }),
});

export const releaseResource = defineAction({
  name: 'demo.release-resource',
  retry: { maxAttempts: 3 },
  run: async (input: { reservationId: string }) => ({ released: input.reservationId }),
});

export type ReservationOutcome = { status: 'confirmed'; reservationId: string } | { status: 'expired' };

/** How long a reservation waits for `confirm` before the flow releases it. */
export const confirmWindowSeconds = 30;

/**
 * Seed 001's reservation deadline: reserve, wait up to 30 s for a `confirm` signal, and on expiry
 * release the reservation and complete with `{ status: 'expired' }`. The business deadline is the
 * signal timeout, so the flow's own code does the cleanup; start it with a larger
 * `runTimeoutSeconds` (the engine's backstop, which closes a run without compensation).
 */
export const reservationFlow = defineFlow({
  name: 'demo.reservation',
  version: 1,
  input: z.object({ orderId: z.string().min(1) }),
  run: async (ctx, input): Promise<ReservationOutcome> => {
    const { reservationId } = await ctx
      .action(reserveResource, { orderId: input.orderId })
      .expiresIn(confirmWindowSeconds)
      .compensateWith(releaseResource, (o) => ({ reservationId: o.reservationId }));
    if ((await ctx.awaitSignal('confirm', { timeoutSeconds: confirmWindowSeconds })) === null) {
      await ctx.compensate();
      return { status: 'expired' };
    }
    return { status: 'confirmed', reservationId };
  },
});

/** The engine's backstop for a reservation run: well past the confirm window and the release. */
export const reservationRunTimeoutSeconds = 300;

export const reservationActions = [reserveResource, releaseResource];
