import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { consumeOnce } from '../../../src/outbox/consume-once.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { orderFulfilment, twoHours } from '../../process/support/order-fulfilment.ts';
import { msg, newOrderId, processManagerOn, rowsOf } from '../../process/support/process-harness.ts';

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Attacks that HELD on real concurrent connections (kept as regression guards). */
describe('adversarial races that held (postgres)', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 12 });
  });
  afterAll(async () => {
    await db.close();
  });

  it('a due shipment timeout racing ShipmentBooked: one wins, the other is a recorded no-op, commands match the winner', async () => {
    const clock = new TestClock(new Date('2026-03-01T10:00:00.000Z'));
    const { pm } = processManagerOn(db, { clock, faults: { afterLock: () => pause(40) } });
    const orders = Array.from({ length: 6 }, () => newOrderId());
    for (const o of orders) {
      await pm.deliver('order-fulfilment', msg.paymentCaptured(o));
      await pm.deliver('order-fulfilment', msg.inventoryReserved(o));
    }
    clock.advance(twoHours);
    await Promise.all([
      pm.sweepProcessTimeouts(),
      ...orders.map((o) => pm.deliver('order-fulfilment', msg.shipmentBooked(o))),
    ]);
    // A pass passes over a timer whose instance a delivery holds (ADR 0101): such a timer is taken by
    // the next pass, once the delivery committed, and recorded there.
    await pm.sweepProcessTimeouts();
    for (const o of orders) {
      const rows = await rowsOf(db, o);
      const state = rows.instance?.current_state;
      expect(['Completed', 'ManualReview']).toContain(state);
      const refunds = rows.outbox.filter((x) => x.type === 'RefundPayment');
      if (state === 'Completed') {
        expect(refunds).toHaveLength(0);
        expect(rows.transitions.find((t) => t.message_type === 'ShipmentTimeout')).toMatchObject({
          outcome: 'ignored',
        });
      } else {
        // timeout first → Refunding, then the booking arrived late → ManualReview
        expect(refunds).toHaveLength(1);
      }
      expect(rows.timeouts.map((t) => t.status)).toEqual(['Delivered']);
      expect(rows.transitions.filter((t) => t.outcome === 'applied').length).toBe(rows.instance!.version);
    }
  });

  it('two different messages to one instance at once: both applied in turn, no lost update', async () => {
    const { pm } = processManagerOn(db, { faults: { afterLock: () => pause(40) } });
    const order = newOrderId();
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    const results = await Promise.all([
      pm.deliver('order-fulfilment', msg.inventoryReserved(order)),
      pm.deliver('order-fulfilment', msg.note(order, 'leave at the door')),
    ]);
    expect(results.map((r) => r.outcome)).toEqual(['applied', 'applied']);
    const rows = await rowsOf(db, order);
    expect(rows.instance).toMatchObject({ current_state: 'BookingShipment', version: 3 });
    expect((rows.instance?.state as { notes: string[]; reservationId?: string }).notes).toEqual(['leave at the door']);
    expect((rows.instance?.state as { reservationId?: string }).reservationId).toBeDefined();
  });

  it('release (retry) racing a redelivery of the message it stopped on: applied exactly once', async () => {
    const clock = new TestClock(new Date('2026-03-01T10:00:00.000Z'));
    const poison = { on: true };
    const processes = [orderFulfilment({ isPoison: (n) => poison.on && n.startsWith('poison') })];
    const config = { quarantine_after_seconds: 60 };
    const { pm } = processManagerOn(db, { processes, config, clock, faults: { afterLock: () => pause(30) } });
    const order = newOrderId();
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    const bad = msg.note(order, 'poison pill');
    await expect(pm.deliver('order-fulfilment', bad)).rejects.toThrow();
    clock.advance(60_000);
    const id = (await pm.deliver('order-fulfilment', bad)).instanceId!;
    poison.on = false;
    const [released, redelivered] = await Promise.all([
      pm.release(id, { mode: 'retry', operator: 'ops', reason: 'fixed' }),
      pm.deliver('order-fulfilment', bad),
    ]);
    expect(released.outcome).toBe('applied');
    expect(['duplicate', 'skipped_quarantined']).toContain(redelivered.outcome);
    const rows = await rowsOf(db, order);
    expect(rows.instance?.status).toBe('ACTIVE');
    expect((rows.instance?.state as { notes: string[] }).notes).toEqual(['poison pill']);
    expect(rows.inbox.filter((i) => i.message_id === bad.id)).toHaveLength(1);
  });

  it('consumeOnce: a throwing effect keeps no inbox row; two concurrent first deliveries run the effect once', async () => {
    const consumer = `billing-${newOrderId()}`;
    await expect(
      consumeOnce(db, consumer, 'm-1', async (tx) => {
        await tx.$executeRaw`select 1`;
        throw new Error('charge failed');
      }),
    ).rejects.toThrow('charge failed');
    expect(await db.prisma.inboxMessage.count({ where: { consumer } })).toBe(0);
    let runs = 0;
    const results = await Promise.all(
      Array.from({ length: 4 }, () =>
        consumeOnce(db, consumer, 'm-1', async () => {
          runs++;
          await pause(50);
          return 'charged';
        }),
      ),
    );
    expect(runs).toBe(1);
    expect(results.filter((r) => r.consumed)).toHaveLength(1);
    expect(await db.prisma.inboxMessage.count({ where: { consumer } })).toBe(1);
  });
});
