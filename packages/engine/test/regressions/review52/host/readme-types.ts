// The README's examples as a user types them, against the installed package's .d.ts.
import {
  createDatabase,
  createEngine,
  defineAction,
  defineFlow,
  EngineError,
  isFlowError,
  migrate,
  NonRetryableError,
} from '@sagaflow/engine';
import { createTestEngine } from '@sagaflow/engine/testing';
import { pino } from 'pino';
import { z } from 'zod';

declare const airline: { book(id: string): Promise<{ id: string } | null> };
declare const psp: { charge(id: string, amount: number): Promise<string> };
const logger = pino();

const bookFlight = defineAction({
  name: 'book-flight',
  retry: { maxAttempts: 3, backoff: { initialMs: 500 }, nonRetryableErrors: ['SoldOut'] },
  run: async (input: { tripId: string }) => {
    const seat = await airline.book(input.tripId);
    if (!seat) throw new NonRetryableError('no seat left');
    return { bookingId: seat.id };
  },
});
const cancelFlight = defineAction({ name: 'cancel-flight', run: async (_i: { id: string }) => ({ ok: true }) });
const bookHotel = defineAction({ name: 'book-hotel', run: async (_i: { tripId: string }) => ({ bookingId: 'h' }) });
const cancelHotel = defineAction({ name: 'cancel-hotel', run: async (_i: { id: string }) => ({ ok: true }) });

export const tripFlow = defineFlow({
  name: 'trip',
  version: 1,
  run: async (ctx, input: { tripId: string }) => {
    try {
      const f = await ctx.action(bookFlight, input).compensateWith(cancelFlight, (o) => ({ id: o.bookingId }));
      const h = await ctx.action(bookHotel, input).compensateWith(cancelHotel, (o) => ({ id: o.bookingId }));
      return { flight: f.bookingId, hotel: h.bookingId };
    } catch (err) {
      if (isFlowError(err, 'cancelled')) await ctx.compensate();
      else await ctx.compensate();
      throw err;
    }
  },
});

const chargeCard = defineAction({
  name: 'charge-card',
  input: z.object({ orderId: z.string(), amount: z.number() }),
  output: z.object({ chargeId: z.string() }),
  run: async (i) => ({ chargeId: await psp.charge(i.orderId, i.amount) }),
});

// README, "Typed, validated inputs and outputs": currency has a default the schema fills in.
const order = defineFlow({
  name: 'order',
  version: 1,
  input: z.object({ orderId: z.string(), amount: z.number(), currency: z.string().default('EUR') }),
  signals: { approve: z.object({ by: z.string() }) },
  run: async (ctx, input) => ctx.action(chargeCard, { orderId: input.orderId, amount: input.amount }),
});

export async function main(): Promise<void> {
  const db = process.env.DATABASE_URL
    ? await createDatabase({ kind: 'postgres', url: process.env.DATABASE_URL, poolSize: 10 })
    : await createDatabase({ kind: 'pglite', dataDir: '.data/pglite' });
  await migrate(db);
  const engine = createEngine({
    db,
    flows: [tripFlow, order],
    actions: [bookFlight, cancelFlight, bookHotel, cancelHotel, chargeCard],
    config: { worker: { concurrency: 8 } },
    logger,
  });
  engine.startWorkers();
  await engine.startFlow(tripFlow, { tripId: 't-1' }, { businessKey: 't-1' });
  // The schema fills `currency` ("The input stored (and replayed) is what the schema produced, defaults
  // filled"), so a start through the flow object leaves it out, as one through the name may.
  await engine.startFlow(order, { orderId: 'o-1', amount: 5 });
  try {
    await engine.startFlow('order', 'just a string');
  } catch (err) {
    if (err instanceof EngineError) console.log(err.code, err.field);
  }
  process.once('SIGTERM', async () => {
    await engine.stopWorkers(10_000);
    await db.close();
  });
}

export async function kit(): Promise<void> {
  const t = await createTestEngine({ flows: [order], actions: [chargeCard] });
  const done = await t.runToCompletion(order, { orderId: 'o-2', amount: 3 });
  console.log(done.run.status);
  await t.close();
}
