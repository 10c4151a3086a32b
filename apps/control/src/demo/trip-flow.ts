import { defineAction, defineFlow, NonRetryableError } from '@sagaflow/engine';
import { z } from 'zod';

const tripResource = z.enum(['flight', 'hotel', 'car']);
/** Which booking the demo can be told to fail for good (`failAt`), so a test can pick the unwind. */
export type TripResource = z.infer<typeof tripResource>;

const tripInput = z.object({
  tripId: z.string().min(1),
  /** Forces this booking to fail without retry: the deterministic way to get a Compensated run. */
  failAt: tripResource.nullable().optional().describe('force this booking to fail without retry'),
  /** Otherwise each booking try fails at random with this probability (retried once). */
  failRate: z.number().min(0).max(1).optional().describe('chance each booking try fails (retried once)'),
});

const prefixes: Record<TripResource, string> = { flight: 'FL', hotel: 'HT', car: 'CR' };

/**
 * A booking and its cancellation for one resource. The random failure lives in the action, never in
 * the flow: flow code is replayed and must decide the same way every time, actions are not.
 */
function defineBooking(resource: TripResource) {
  const book = defineAction({
    name: `demo.book-${resource}`,
    // A plain Error is retryable: with two tries, most random failures recover on the second.
    retry: { maxAttempts: 2 },
    run: async (input: { tripId: string; forceFailure: boolean; failRate: number }) => {
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 200));
      if (input.forceFailure) throw new NonRetryableError(`${resource} booking refused (forced by failAt)`);
      if (Math.random() < input.failRate) throw new Error(`${resource} provider timed out`);
      return { bookingId: `${prefixes[resource]}-${input.tripId.slice(0, 8).toUpperCase()}` };
    },
  });
  const cancel = defineAction({
    name: `demo.cancel-${resource}`,
    retry: { maxAttempts: 3 },
    run: async (input: { bookingId: string }) => {
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
      return { cancelled: input.bookingId };
    },
  });
  return { book, cancel };
}

const flight = defineBooking('flight');
const hotel = defineBooking('hotel');
const car = defineBooking('car');

export const bookFlight = flight.book;
export const cancelFlight = flight.cancel;
export const bookHotel = hotel.book;
export const cancelHotel = hotel.cancel;
export const bookCar = car.book;
export const cancelCar = car.cancel;

/**
 * Seed 001's travel-booking saga: flight, hotel, car, each compensation registered once its booking
 * succeeded. A failure unwinds what was booked, newest first (car fails: cancel hotel, then flight),
 * and the run ends Compensated; a failure before anything was booked ends it Failed.
 */
export const tripFlow = defineFlow({
  name: 'demo.trip',
  version: 1,
  input: tripInput,
  run: async (ctx, input) => {
    const booking = (resource: TripResource) => ({
      tripId: input.tripId,
      forceFailure: input.failAt === resource,
      failRate: input.failRate ?? 0,
    });
    try {
      const f = await ctx
        .action(bookFlight, booking('flight'))
        .compensateWith(cancelFlight, (o) => ({ bookingId: o.bookingId }));
      const h = await ctx
        .action(bookHotel, booking('hotel'))
        .compensateWith(cancelHotel, (o) => ({ bookingId: o.bookingId }));
      const c = await ctx
        .action(bookCar, booking('car'))
        .compensateWith(cancelCar, (o) => ({ bookingId: o.bookingId }));
      return { flightId: f.bookingId, hotelId: h.bookingId, carId: c.bookingId };
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

export const tripActions = [bookFlight, cancelFlight, bookHotel, cancelHotel, bookCar, cancelCar];
