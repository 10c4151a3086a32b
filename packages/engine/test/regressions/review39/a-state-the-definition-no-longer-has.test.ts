import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Database } from '../../../src/db/database.ts';
import { defineProcess } from '../../../src/index.ts';
import { newMessageId, newOrderId, processManagerOn } from '../../process/support/process-harness.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';

/**
 * Review 39. A new version of a process definition renames a state (`Reserving` → `Reserve`) while an
 * instance sits in the old one. The stored state no longer names a state of the definition, just as
 * stored data that no longer decodes (`state_undecodable`). Seed 004: "Which step is expected now?";
 * seed 002: an instance that cannot handle a message stops (recorded, then quarantined) with the
 * message kept for its repairer. Today the message is answered `ignored` (`not_accepted_in_state`),
 * written to the inbox as handled, and can never be applied: not by a redelivery (a duplicate), not
 * by a release (nothing was recorded). The order's ShipmentBooked is gone without a failure.
 */
const v1 = defineProcess({
  name: 'review39-versioned',
  states: ['Paid', 'Reserving', 'Shipped'],
  initial: 'Paid',
  final: ['Shipped'],
  data: z.object({ key: z.string() }),
  initialData: (key) => ({ key }),
  messages: {
    Reserve: z.object({ key: z.string() }),
    Booked: z.object({ key: z.string() }),
  },
  correlate: (m) => m.payload.key,
  on: {
    Reserve: [{ from: 'Paid', to: 'Reserving' }],
    Booked: [{ from: 'Reserving', to: 'Shipped' }],
  },
});

const v2 = defineProcess({
  name: 'review39-versioned',
  states: ['Paid', 'AwaitingStock', 'Shipped'],
  initial: 'Paid',
  final: ['Shipped'],
  data: z.object({ key: z.string() }),
  initialData: (key) => ({ key }),
  messages: {
    Reserve: z.object({ key: z.string() }),
    Booked: z.object({ key: z.string() }),
  },
  correlate: (m) => m.payload.key,
  on: {
    Reserve: [{ from: 'Paid', to: 'AwaitingStock' }],
    Booked: [{ from: 'AwaitingStock', to: 'Shipped' }],
  },
});

describe(`an instance in a state its definition no longer has (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('a message to it is not recorded as handled: it fails, and stays deliverable', async () => {
    const key = newOrderId();
    const before = processManagerOn(db, { processes: [v1] });
    await before.pm.deliver(v1, { id: newMessageId('reserve'), type: 'Reserve', payload: { key } });

    // The deployment with the renamed state.
    const after = processManagerOn(db, { processes: [v2] });
    const booked = { id: newMessageId('booked'), type: 'Booked', payload: { key } };
    const outcome = await after.pm.deliver(v2, booked).then(
      (r) => r.outcome,
      (err: unknown) => `threw: ${err instanceof Error ? err.message : String(err)}`,
    );
    const instance = await db.prisma.sagaInstance.findUnique({
      where: { process_name_correlation_key: { process_name: v2.name, correlation_key: key } },
    });
    const inbox = await db.prisma.inboxMessage.findMany({ where: { instance_id: instance!.id } });
    // The booking is not marked handled: its redelivery (after a fix) could still apply it.
    expect.soft(inbox.map((r) => r.message_id)).not.toContain(booked.id);
    expect(outcome).toMatch(/^threw: .*Reserving/);
  });

  it('a timer armed under a timeout name the new definition dropped does not fire as a no-op', async () => {
    const timerV1 = defineProcess({
      name: 'review39-deadline',
      states: ['Booking', 'Shipped', 'Refunding'],
      initial: 'Booking',
      final: ['Shipped', 'Refunding'],
      data: z.object({ key: z.string() }),
      initialData: (key) => ({ key }),
      messages: { Paid: z.object({ key: z.string() }), Booked: z.object({ key: z.string() }) },
      correlate: (m) => m.payload.key,
      timeouts: { shipmentLate: { afterMs: 60_000, expects: 'Booking' } },
      on: {
        Paid: [{ from: 'Booking', to: 'Booking', schedule: ['shipmentLate'] }],
        Booked: [{ from: 'Booking', to: 'Shipped' }],
        shipmentLate: [{ from: 'Booking', to: 'Refunding' }],
      },
    });
    // The same deadline, renamed in the next version.
    const timerV2 = defineProcess({
      name: 'review39-deadline',
      states: ['Booking', 'Shipped', 'Refunding'],
      initial: 'Booking',
      final: ['Shipped', 'Refunding'],
      data: z.object({ key: z.string() }),
      initialData: (key) => ({ key }),
      messages: { Paid: z.object({ key: z.string() }), Booked: z.object({ key: z.string() }) },
      correlate: (m) => m.payload.key,
      timeouts: { bookingLate: { afterMs: 60_000, expects: 'Booking' } },
      on: {
        Paid: [{ from: 'Booking', to: 'Booking', schedule: ['bookingLate'] }],
        Booked: [{ from: 'Booking', to: 'Shipped' }],
        bookingLate: [{ from: 'Booking', to: 'Refunding' }],
      },
    });
    const key = newOrderId();
    const before = processManagerOn(db, { processes: [timerV1] });
    const id = (await before.pm.deliver(timerV1, { id: newMessageId('paid'), type: 'Paid', payload: { key } }))
      .instanceId!;

    const after = processManagerOn(db, { processes: [timerV2], clock: before.clock });
    before.clock.advance(60_000);
    await after.pm.sweepProcessTimeouts();
    const timers = await db.prisma.processTimeout.findMany({ where: { instance_id: id } });
    const history = (await after.pm.history(id)).transitions.map((t) => [t.messageType, t.outcome]);
    // The deadline was neither applied nor kept: it is Delivered as an `ignored` no-op, and the order
    // waits in Booking with no deadline at all.
    expect.soft(history).not.toContainEqual(['shipmentLate', 'ignored']);
    expect(timers.map((t) => t.status)).toEqual(['Pending']);
  });
});
