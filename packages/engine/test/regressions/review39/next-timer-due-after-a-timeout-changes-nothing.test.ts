import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Database } from '../../../src/db/database.ts';
import { defineProcess } from '../../../src/index.ts';
import { newMessageId, newOrderId, processManagerOn } from '../../process/support/process-harness.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';

const twoHours = 2 * 60 * 60 * 1000;

/**
 * Seed 004: "no shipment within two hours" is the business deadline, and a guard may decide the
 * deadline does not apply (here: the carrier already acknowledged). Seed 002: an instance shows
 * "when the next pending timer is due". A due timeout whose transition's guard rejects is delivered
 * (marked Delivered, an `ignored` history row) but the instance is not saved, so its
 * next_timer_due_at still names that timer: the instance reports a deadline two hours ago that has
 * already fired, and looks overdue to every stalled-instance check, for as long as it waits.
 */
const shipping = defineProcess({
  name: 'review39-shipping',
  states: ['Paid', 'Booking', 'Shipped', 'Refunding'],
  initial: 'Paid',
  final: ['Shipped', 'Refunding'],
  data: z.object({ key: z.string(), acknowledged: z.boolean() }),
  initialData: (key) => ({ key, acknowledged: false }),
  messages: {
    Book: z.object({ key: z.string() }),
    CarrierAcknowledged: z.object({ key: z.string() }),
    ShipmentBooked: z.object({ key: z.string() }),
  },
  correlate: (m) => m.payload.key,
  timeouts: { bookingLate: { afterMs: twoHours, expects: 'Booking' } },
  on: {
    Book: [{ from: 'Paid', to: 'Booking', schedule: ['bookingLate'] }],
    CarrierAcknowledged: [{ from: 'Booking', to: 'Booking', then: (d) => ({ data: { ...d, acknowledged: true } }) }],
    ShipmentBooked: [{ from: 'Booking', to: 'Shipped' }],
    bookingLate: [{ from: 'Booking', to: 'Refunding', guard: (d) => !d.acknowledged }],
  },
});

describe(`next timer due after a timeout its guard rejects (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('an instance whose only timer fired shows no next timer', async () => {
    const { pm, clock } = processManagerOn(db, { processes: [shipping] });
    const key = newOrderId();
    const id = (await pm.deliver(shipping, { id: newMessageId('book'), type: 'Book', payload: { key } })).instanceId!;
    await pm.deliver(shipping, { id: newMessageId('ack'), type: 'CarrierAcknowledged', payload: { key } });
    expect((await pm.find(id))?.nextTimerDueAt).toEqual(new Date(clock.now().getTime() + twoHours));

    clock.advance(twoHours);
    await pm.sweepProcessTimeouts();
    const history = (await pm.history(id)).transitions.map((t) => [t.messageType, t.outcome]);
    expect(history).toContainEqual(['bookingLate', 'ignored']);
    const timers = await db.prisma.processTimeout.findMany({ where: { instance_id: id } });
    expect(timers.map((t) => t.status)).toEqual(['Delivered']);

    expect(await pm.find(id)).toMatchObject({ currentState: 'Booking', nextTimerDueAt: null });
  });
});
