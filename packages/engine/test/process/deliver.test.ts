import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { EngineError } from '../../src/index.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';
import { twoHours } from './support/order-fulfilment.ts';
import { msg, newOrderId, processManagerOn, rowsOf } from './support/process-harness.ts';

describe(`deliver: one transaction per message (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('happy path: payment → inventory → shipment → Completed, each command in the outbox with a stable id', async () => {
    const { pm, clock } = processManagerOn(db);
    const order = newOrderId();
    const pay = msg.paymentCaptured(order);
    const started = await pm.deliver('order-fulfilment', pay);
    expect(started).toMatchObject({
      outcome: 'applied',
      from: 'AwaitingPayment',
      to: 'ReservingInventory',
      commands: 1,
    });
    const reserved = msg.inventoryReserved(order);
    await pm.deliver('order-fulfilment', reserved);
    const shipped = msg.shipmentBooked(order);
    clock.advance(60_000);
    await pm.deliver('order-fulfilment', shipped);

    const rows = await rowsOf(db, order);
    rows.outbox.sort(
      (a, b) =>
        (a.message_id.startsWith(`order-fulfilment/${pay.id}`) ? -1 : 1) -
        (b.message_id.startsWith(`order-fulfilment/${pay.id}`) ? -1 : 1),
    );
    expect(rows.instance).toMatchObject({ status: 'COMPLETED', current_state: 'Completed', version: 3 });
    expect(rows.instance?.completed_at).toEqual(clock.now());
    expect(rows.instance?.state).toMatchObject({ paymentId: `pay-${order}`, shipmentId: `ship-${order}` });
    expect(rows.outbox.map((o) => [o.message_id, o.type, o.destination, o.status, o.source_kind])).toEqual([
      [`order-fulfilment/${pay.id}/0`, 'ReserveInventory', 'inventory', 'Pending', 'process'],
      [`order-fulfilment/${reserved.id}/0`, 'BookShipment', 'shipping', 'Pending', 'process'],
    ]);
    expect(rows.outbox[1]?.payload).toEqual({ orderId: order, reservationId: `res-${order}` });
    expect(rows.outbox[0]?.headers).toMatchObject({ 'sagaflow-causation-id': pay.id });
    expect(rows.outbox.every((o) => o.source_id === rows.instance?.id && o.attempts === 0)).toBe(true);
    expect(rows.outbox[0]?.available_at).toEqual(rows.instance?.created_at);
    expect(rows.inbox.map((i) => [i.consumer, i.message_id]).sort()).toEqual(
      [
        ['order-fulfilment', pay.id],
        ['order-fulfilment', reserved.id],
        ['order-fulfilment', shipped.id],
      ].sort(),
    );
    expect(rows.transitions.map((t) => [t.from_state, t.to_state, t.message_id, t.outcome])).toEqual([
      ['AwaitingPayment', 'ReservingInventory', pay.id, 'applied'],
      ['ReservingInventory', 'BookingShipment', reserved.id, 'applied'],
      ['BookingShipment', 'Completed', shipped.id, 'applied'],
    ]);
    expect(rows.timeouts).toHaveLength(1);
  });

  it('exact redelivery of a handled message id writes nothing', async () => {
    const { pm } = processManagerOn(db);
    const order = newOrderId();
    const pay = msg.paymentCaptured(order);
    await pm.deliver('order-fulfilment', pay);
    const before = await rowsOf(db, order);
    const again = await pm.deliver('order-fulfilment', pay);
    expect(again.outcome).toBe('duplicate');
    const after = await rowsOf(db, order);
    expect(after).toEqual(before);
    expect(after.outbox).toHaveLength(1);
  });

  it('two message ids reporting the same fact: the second is a recorded no-op, one command only', async () => {
    const { pm } = processManagerOn(db);
    const order = newOrderId();
    const first = msg.paymentCaptured(order);
    const second = msg.paymentCaptured(order);
    await pm.deliver('order-fulfilment', first);
    const r = await pm.deliver('order-fulfilment', second);
    expect(r).toMatchObject({ outcome: 'ignored', reason: 'not_accepted_in_state' });
    const rows = await rowsOf(db, order);
    expect(rows.instance).toMatchObject({ current_state: 'ReservingInventory', version: 1 });
    expect(rows.outbox).toHaveLength(1);
    expect(rows.inbox.map((i) => i.message_id).sort()).toEqual([first.id, second.id].sort());
    expect(rows.transitions.map((t) => [t.from_state, t.to_state, t.outcome, t.detail])).toEqual([
      ['AwaitingPayment', 'ReservingInventory', 'applied', null],
      ['ReservingInventory', 'ReservingInventory', 'ignored', { reason: 'not_accepted_in_state' }],
    ]);
  });

  it('a two-hour deadline is a row: not due at 1h59m, and stale once the shipment was booked', async () => {
    const { pm, clock } = processManagerOn(db);
    const order = newOrderId();
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    await pm.deliver('order-fulfilment', msg.inventoryReserved(order));
    const armed = (await rowsOf(db, order)).timeouts[0];
    expect(armed).toMatchObject({ name: 'ShipmentTimeout', expected_state: 'BookingShipment', status: 'Pending' });
    expect(armed?.due_at.getTime()).toBe(clock.now().getTime() + twoHours);
    expect((await rowsOf(db, order)).instance?.next_timer_due_at).toEqual(armed?.due_at);

    clock.advance(twoHours - 60_000);
    await pm.sweepProcessTimeouts();
    expect((await rowsOf(db, order)).timeouts[0]?.status).toBe('Pending');

    await pm.deliver('order-fulfilment', msg.shipmentBooked(order));
    clock.advance(60_000);
    await pm.sweepProcessTimeouts();
    const rows = await rowsOf(db, order);
    expect(rows.timeouts[0]).toMatchObject({ status: 'Delivered' });
    expect(rows.instance).toMatchObject({ current_state: 'Completed', status: 'COMPLETED' });
    expect(rows.transitions.at(-1)).toMatchObject({
      message_id: armed?.id,
      message_type: 'ShipmentTimeout',
      outcome: 'ignored',
      from_state: 'Completed',
      to_state: 'Completed',
      detail: { reason: 'stale_timeout' },
    });
    expect(rows.outbox.map((o) => o.type).sort()).toEqual(['BookShipment', 'ReserveInventory']);
    expect((await pm.sweepProcessTimeouts()).delivered).toBe(0);
  });

  it('a due timeout in its expected state starts compensation; its commands are keyed on the timeout id', async () => {
    const { pm, clock } = processManagerOn(db);
    const order = newOrderId();
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    await pm.deliver('order-fulfilment', msg.inventoryReserved(order));
    clock.advance(twoHours);
    expect(await pm.sweepProcessTimeouts()).toMatchObject({ failed: 0 });
    const rows = await rowsOf(db, order);
    const timeoutId = rows.timeouts[0]?.id;
    expect(rows.instance).toMatchObject({ current_state: 'Refunding', status: 'ACTIVE' });
    expect(rows.outbox.filter((o) => o.message_id.includes(timeoutId!)).map((o) => [o.message_id, o.type])).toEqual([
      [`order-fulfilment/${timeoutId}/0`, 'RefundPayment'],
      [`order-fulfilment/${timeoutId}/1`, 'ReleaseInventory'],
    ]);
    expect(rows.inbox.map((i) => i.message_id)).toContain(timeoutId);
  });

  it('the scheduler loop delivers due timeouts without anyone sweeping by hand, and stops', async () => {
    const { pm, clock } = processManagerOn(db);
    const order = newOrderId();
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    await pm.deliver('order-fulfilment', msg.inventoryReserved(order));
    clock.advance(twoHours);
    pm.startTimeoutScheduler({ intervalMs: 20 });
    try {
      const deadline = Date.now() + 10_000;
      while ((await rowsOf(db, order)).timeouts[0]?.status !== 'Delivered' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      await pm.stopTimeoutScheduler();
    }
    expect((await rowsOf(db, order)).instance?.current_state).toBe('Refunding');
  });

  it('failed compensation ends in ManualReview, an open (ACTIVE) state, not a silent failure', async () => {
    const { pm } = processManagerOn(db);
    const order = newOrderId();
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    await pm.deliver('order-fulfilment', msg.inventoryRejected(order));
    expect((await rowsOf(db, order)).outbox.map((o) => o.type).sort()).toEqual(['RefundPayment', 'ReserveInventory']);
    await pm.deliver('order-fulfilment', msg.refundFailed(order));
    const rows = await rowsOf(db, order);
    expect(rows.instance).toMatchObject({ current_state: 'ManualReview', status: 'ACTIVE', completed_at: null });
    expect(rows.instance?.state).toMatchObject({ paymentId: `pay-${order}`, refundFailure: 'card expired' });
    expect(rows.transitions.map((t) => `${t.from_state}->${t.to_state}`)).toEqual([
      'AwaitingPayment->ReservingInventory',
      'ReservingInventory->Refunding',
      'Refunding->ManualReview',
    ]);
  });

  it('a refund that completes ends Compensated (COMPLETED); a late booking during the refund goes to ManualReview', async () => {
    const { pm } = processManagerOn(db);
    const a = newOrderId();
    await pm.deliver('order-fulfilment', msg.paymentCaptured(a));
    await pm.deliver('order-fulfilment', msg.inventoryRejected(a));
    await pm.deliver('order-fulfilment', msg.refundCompleted(a));
    expect((await rowsOf(db, a)).instance).toMatchObject({ current_state: 'Compensated', status: 'COMPLETED' });

    const b = newOrderId();
    await pm.deliver('order-fulfilment', msg.paymentCaptured(b));
    await pm.deliver('order-fulfilment', msg.inventoryRejected(b));
    await pm.deliver('order-fulfilment', msg.shipmentBooked(b));
    const rows = await rowsOf(db, b);
    expect(rows.instance).toMatchObject({ current_state: 'ManualReview', status: 'ACTIVE' });
    expect(rows.transitions.at(-1)).toMatchObject({ to_state: 'ManualReview', detail: { late: true } });
  });

  it('an operator repair goes through the same transaction, is audited, idempotent, and refused on a changed state', async () => {
    const { pm } = processManagerOn(db);
    const order = newOrderId();
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    await pm.deliver('order-fulfilment', msg.inventoryRejected(order));
    await pm.deliver('order-fulfilment', msg.refundFailed(order));
    const id = (await rowsOf(db, order)).instance!.id;
    const repair = {
      command: 'RetryRefund',
      input: {},
      expectedState: 'ManualReview',
      operator: 'ops@example.com',
      reason: 'provider fixed the card issue',
      idempotencyKey: `k-${order}`,
    };
    const before = await rowsOf(db, order);
    expect(await pm.previewOperatorCommand('order-fulfilment', id, repair)).toEqual({
      outcome: 'would_apply',
      from: 'ManualReview',
      to: 'Refunding',
      commands: [
        { type: 'RefundPayment', destination: 'payments', payload: { orderId: order, paymentId: `pay-${order}` } },
      ],
      timeouts: [],
    });
    expect(await rowsOf(db, order)).toEqual(before);
    expect(await pm.runOperatorCommand('order-fulfilment', id, repair)).toEqual({
      outcome: 'applied',
      from: 'ManualReview',
      to: 'Refunding',
      commands: 1,
    });
    const after = await rowsOf(db, order);
    expect(after.instance).toMatchObject({ current_state: 'Refunding', version: 4 });
    expect(
      after.outbox.find((o) => o.message_id === `order-fulfilment/operator:${after.instance?.id ?? ''}:k-${order}/0`),
    ).toMatchObject({
      type: 'RefundPayment',
      destination: 'payments',
    });
    expect(after.transitions.at(-1)).toMatchObject({
      from_state: 'ManualReview',
      to_state: 'Refunding',
      outcome: 'repair',
      message_type: 'operator:RetryRefund',
      detail: { operator: 'ops@example.com', reason: 'provider fixed the card issue', command: 'RetryRefund' },
    });

    expect((await pm.runOperatorCommand('order-fulfilment', id, repair)).outcome).toBe('duplicate');
    expect((await pm.previewOperatorCommand('order-fulfilment', id, repair)).outcome).toBe('duplicate');
    const stale = await pm.runOperatorCommand('order-fulfilment', id, {
      ...repair,
      command: 'AcceptLateBooking',
      input: { shipmentId: 's-1' },
      idempotencyKey: `k2-${order}`,
    });
    expect(stale).toEqual({ outcome: 'rejected', reason: 'expected_state_changed', currentState: 'Refunding' });
    expect(await rowsOf(db, order)).toEqual(after);

    await expect(
      pm.runOperatorCommand('order-fulfilment', id, {
        ...repair,
        command: 'AcceptLateBooking',
        input: { shipmentId: '' },
        idempotencyKey: `k3-${order}`,
      }),
    ).rejects.toThrow(/input\.shipmentId/);
    await expect(
      pm.runOperatorCommand('order-fulfilment', id, {
        ...repair,
        command: 'DropTables',
        idempotencyKey: `k4-${order}`,
      }),
    ).rejects.toMatchObject({ code: 'invalid_input' });
    expect(await rowsOf(db, order)).toEqual(after);
  });

  it('process and outbox commit together: a failure after the outbox insert leaves none of it behind', async () => {
    let failNext = true;
    const { pm } = processManagerOn(db, {
      faults: {
        afterOutbox: () => {
          if (failNext) {
            failNext = false;
            throw new Error('crash after the outbox insert');
          }
        },
      },
    });
    const order = newOrderId();
    failNext = false;
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    const before = await rowsOf(db, order);

    failNext = true;
    const reserved = msg.inventoryReserved(order);
    await expect(pm.deliver('order-fulfilment', reserved)).rejects.toThrow('crash after the outbox insert');
    const after = await rowsOf(db, order);
    expect(after).toEqual(before);
    expect(after.instance).toMatchObject({ current_state: 'ReservingInventory', version: 1, next_timer_due_at: null });
    expect(
      await db.prisma.outboxMessage.count({
        where: { message_id: { startsWith: `order-fulfilment/${reserved.id}/` } },
      }),
    ).toBe(0);
    expect(await db.prisma.inboxMessage.count({ where: { message_id: reserved.id } })).toBe(0);

    // Nothing was recorded as handled, so the redelivery applies it.
    expect((await pm.deliver('order-fulfilment', reserved)).outcome).toBe('applied');
    expect((await rowsOf(db, order)).outbox).toHaveLength(2);
  });

  it('a first message that fails after its outbox insert leaves no instance either', async () => {
    const { pm } = processManagerOn(db, {
      faults: {
        afterOutbox: () => {
          throw new Error('boom');
        },
      },
    });
    const order = newOrderId();
    await expect(pm.deliver('order-fulfilment', msg.paymentCaptured(order))).rejects.toThrow('boom');
    const rows = await rowsOf(db, order);
    expect(rows.instance).toBeNull();
    expect(await db.prisma.outboxMessage.count({ where: { message_id: { contains: order } } })).toBe(0);
  });

  it('a transient store error (serialization failure) is retried with backoff and commits once', async () => {
    let failures = 2;
    const { pm, waits } = processManagerOn(db, {
      faults: {
        afterOutbox: () => {
          if (failures-- > 0)
            throw Object.assign(new Error('could not serialize access due to concurrent update'), { code: '40001' });
        },
      },
    });
    const order = newOrderId();
    const r = await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    expect(r.outcome).toBe('applied');
    expect(waits).toEqual([100, 200]);
    const rows = await rowsOf(db, order);
    expect(rows.outbox).toHaveLength(1);
    expect(rows.transitions).toHaveLength(1);
  });

  it('bad input is refused with the field named, before any write: the instance is untouched', async () => {
    const { pm } = processManagerOn(db);
    const order = newOrderId();
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    const before = await rowsOf(db, order);
    const good = msg.inventoryReserved(order);
    const cases: [unknown, RegExp][] = [
      [{ ...good, id: undefined }, /message\.id is required/],
      [{ ...good, id: '  ' }, /message\.id is required/],
      [{ ...good, type: 'InventoryTeleported' }, /message\.type "InventoryTeleported" is not a message/],
      [{ ...good, payload: { orderId: order } }, /message\.payload\.reservationId/],
      [{ ...good, payload: { orderId: order, reservationId: 42 } }, /message\.payload\.reservationId/],
      [{ ...good, type: 'ShipmentTimeout', payload: { orderId: order } }, /message\.type "ShipmentTimeout"/],
      [null, /message must be an object/],
    ];
    for (const [bad, why] of cases) {
      const err: unknown = await pm.deliver('order-fulfilment', bad as never).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EngineError);
      expect(err).toMatchObject({ code: 'invalid_input', message: expect.stringMatching(why) as unknown });
    }
    await expect(pm.deliver('no-such-process', good)).rejects.toMatchObject({ code: 'unknown_process' });
    expect(await rowsOf(db, order)).toEqual(before);
  });

  it('a message for no instance that cannot start one is unroutable and writes nothing', async () => {
    const { pm } = processManagerOn(db);
    const order = newOrderId();
    const r = await pm.deliver('order-fulfilment', msg.shipmentBooked(order));
    expect(r).toEqual({ outcome: 'unroutable', instanceId: null });
    expect((await rowsOf(db, order)).instance).toBeNull();
  });
});
