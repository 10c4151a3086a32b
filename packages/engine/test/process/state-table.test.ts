import { describe, expect, it } from 'vitest';
import { decide, type ProcessSnapshot } from '../../src/index.ts';
import { orderFulfilment } from './support/order-fulfilment.ts';

/**
 * Seed 004: "test the state table, not a queue script". One state, one message, then the next state
 * and the emitted commands. Pure: no database, no queue, no clock.
 */
const fulfilment = orderFulfilment();
const aFulfilmentProcess = (state: string, data: Record<string, unknown> = {}): ProcessSnapshot => ({
  state,
  data: { orderId: 'o-1', paymentId: 'p-1', reservationId: 'r-1', notes: [], ...data },
});
const aTimeout = (expectedState: string) => ({ type: 'ShipmentTimeout', payload: { expectedState }, expectedState });

describe('order fulfilment: the state table', () => {
  it('ignores a stale shipment timeout', () => {
    const process = aFulfilmentProcess('Completed');
    const decision = decide(fulfilment, process, aTimeout('BookingShipment'));
    expect(decision).toEqual({ kind: 'ignored', state: 'Completed', reason: 'stale_timeout' });
    expect(process.state).toBe('Completed');
  });

  it('ignores a timeout armed in an earlier visit to the state it expects; fires it in its own visit', () => {
    const timeout = { ...aTimeout('BookingShipment'), armedVisit: 2 };
    const back = { ...aFulfilmentProcess('BookingShipment'), visit: 4 };
    expect(decide(fulfilment, back, timeout)).toEqual({
      kind: 'ignored',
      state: 'BookingShipment',
      reason: 'stale_timeout',
    });
    const same = { ...aFulfilmentProcess('BookingShipment'), visit: 2 };
    expect(decide(fulfilment, same, timeout)).toMatchObject({ kind: 'applied', to: 'Refunding' });
  });

  it.each([
    // state, message type, payload, next state, commands (type → destination)
    [
      'AwaitingPayment',
      'PaymentCaptured',
      { orderId: 'o-1', paymentId: 'p-1' },
      'ReservingInventory',
      ['ReserveInventory→inventory'],
    ],
    [
      'ReservingInventory',
      'InventoryReserved',
      { orderId: 'o-1', reservationId: 'r-1' },
      'BookingShipment',
      ['BookShipment→shipping'],
    ],
    [
      'ReservingInventory',
      'InventoryRejected',
      { orderId: 'o-1', reason: 'none left' },
      'Refunding',
      ['RefundPayment→payments'],
    ],
    ['BookingShipment', 'ShipmentBooked', { orderId: 'o-1', shipmentId: 's-1' }, 'Completed', []],
    ['Refunding', 'RefundCompleted', { orderId: 'o-1' }, 'Compensated', []],
    ['Refunding', 'RefundFailed', { orderId: 'o-1', reason: 'card expired' }, 'ManualReview', []],
    ['Refunding', 'ShipmentBooked', { orderId: 'o-1', shipmentId: 's-1' }, 'ManualReview', []],
  ] as const)('%s + %s → %s', (state, type, payload, to, commands) => {
    const d = decide(fulfilment, aFulfilmentProcess(state), { type, payload });
    expect(d.kind).toBe('applied');
    if (d.kind !== 'applied') return;
    expect(d.to).toBe(to);
    expect(d.commands.map((c) => `${c.type}→${c.destination}`)).toEqual(commands);
  });

  it('arms the two-hour shipment timeout when inventory is reserved, expecting BookingShipment', () => {
    const d = decide(fulfilment, aFulfilmentProcess('ReservingInventory'), {
      type: 'InventoryReserved',
      payload: { orderId: 'o-1', reservationId: 'r-1' },
    });
    expect(d.kind === 'applied' && d.timeouts).toEqual([
      { name: 'ShipmentTimeout', expectedState: 'BookingShipment', afterMs: 2 * 60 * 60 * 1000, payload: {} },
    ]);
  });

  it('a shipment timeout in BookingShipment refunds the payment and releases the inventory', () => {
    const d = decide(fulfilment, aFulfilmentProcess('BookingShipment'), aTimeout('BookingShipment'));
    expect(d).toMatchObject({ kind: 'applied', to: 'Refunding' });
    expect(d.kind === 'applied' && d.commands).toEqual([
      { type: 'RefundPayment', destination: 'payments', payload: { orderId: 'o-1', paymentId: 'p-1' } },
      { type: 'ReleaseInventory', destination: 'inventory', payload: { orderId: 'o-1', reservationId: 'r-1' } },
    ]);
  });

  it.each([
    ['ReservingInventory', 'PaymentCaptured'],
    ['Completed', 'InventoryReserved'],
    ['Compensated', 'ShipmentBooked'],
    ['AwaitingPayment', 'RefundCompleted'],
  ])('in %s, %s is not accepted: a no-op', (state, type) => {
    expect(decide(fulfilment, aFulfilmentProcess(state), { type, payload: { orderId: 'o-1' } })).toEqual({
      kind: 'ignored',
      state,
      reason: 'not_accepted_in_state',
    });
  });

  it('a transition is pure: the snapshot it was given is not changed', () => {
    const process = aFulfilmentProcess('AwaitingPayment', { paymentId: undefined });
    const copy = structuredClone(process);
    decide(fulfilment, process, { type: 'PaymentCaptured', payload: { orderId: 'o-1', paymentId: 'p-9' } });
    expect(process).toEqual(copy);
  });
});
