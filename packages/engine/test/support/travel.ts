import { defineAction, defineFlow } from '../../src/index.ts';

/** Seed 001's booking saga, with a log of what ran and switches to make steps fail. */
export function travelSaga() {
  const log: string[] = [];
  const failing = new Set<string>();
  const step = (name: string) =>
    defineAction({
      name,
      run: async (i: { tripId: string }) => {
        log.push(name);
        if (failing.has(name)) throw new Error(`${name} failed`);
        return { id: `${name}:${i.tripId}` };
      },
    });
  const cancel = (name: string) =>
    defineAction({
      name,
      run: async (i: { id: string }) => {
        log.push(`${name}(${i.id})`);
        if (failing.has(name)) throw new Error(`${name} failed`);
        return { cancelled: i.id };
      },
    });
  const bookFlight = step('book-flight');
  const bookHotel = step('book-hotel');
  const bookCar = step('book-car');
  const cancelFlight = cancel('cancel-flight');
  const cancelHotel = cancel('cancel-hotel');
  const cancelCar = cancel('cancel-car');
  const make = (name: string, compensation: { parallel?: boolean; continueWithError?: boolean } = {}) =>
    defineFlow({
      name,
      version: 1,
      run: async (ctx, input: { tripId: string }) => {
        try {
          const flight = await ctx.action(bookFlight, input).compensateWith(cancelFlight, (o) => ({ id: o.id }));
          const hotel = await ctx.action(bookHotel, input).compensateWith(cancelHotel, (o) => ({ id: o.id }));
          const car = await ctx.action(bookCar, input).compensateWith(cancelCar, (o) => ({ id: o.id }));
          return { flight: flight.id, hotel: hotel.id, car: car.id };
        } catch (err) {
          await ctx.compensate(compensation);
          throw err;
        }
      },
    });
  return {
    log,
    failing,
    flows: [
      make('booking'),
      make('booking-parallel', { parallel: true }),
      make('booking-continue', { continueWithError: true }),
    ],
    actions: [bookFlight, bookHotel, bookCar, cancelFlight, cancelHotel, cancelCar],
  };
}
