import { defineProcess, type EmittedCommand } from '@sagaflow/engine';
import { z } from 'zod';

/** How long the demo waits for a carrier before it refunds (seed 004 says two hours; a demo cannot). */
export const shipmentTimeoutMs = 20_000;

/** A customer note the process cannot handle: the demo's poison message, which ends in quarantine. */
export const isPoisonNote = (note: string) => note.startsWith('poison');

const orderId = { orderId: z.string().min(1) };
const fulfilmentData = z.object({
  orderId: z.string(),
  paymentId: z.string().optional(),
  reservationId: z.string().optional(),
  shipmentId: z.string().optional(),
  refundFailure: z.string().optional(),
  notes: z.array(z.string()).default([]),
});
type FulfilmentData = z.output<typeof fulfilmentData>;

const refund = (d: FulfilmentData): EmittedCommand => ({
  type: 'RefundPayment',
  destination: 'demo.payments',
  payload: { orderId: d.orderId, paymentId: d.paymentId ?? null },
});

type OpenState = 'AwaitingPayment' | 'ReservingInventory' | 'BookingShipment' | 'Refunding' | 'ManualReview';
const takeNote = (from: OpenState) => ({
  from,
  to: from,
  then: (d: FulfilmentData, p: { note: string }) => {
    if (isPoisonNote(p.note)) throw new Error(`cannot parse customer note "${p.note}"`);
    return { data: { ...d, notes: [...d.notes, p.note] } };
  },
});

/**
 * Seed 004's order fulfilment as the demo runs it: PaymentCaptured → reserve inventory →
 * InventoryReserved → book shipment (a shipment timeout armed) → ShipmentBooked → Completed;
 * InventoryRejected or the timeout → Refunding → RefundCompleted → Compensated, or RefundFailed →
 * ManualReview; a booking that arrives after the refund began is a late message → ManualReview.
 * Customer notes are taken in every open state; a poison note throws, every time.
 */
export const fulfilmentProcess = defineProcess({
  name: 'demo.fulfilment',
  states: [
    'AwaitingPayment',
    'ReservingInventory',
    'BookingShipment',
    'Completed',
    'Refunding',
    'Compensated',
    'ManualReview',
  ],
  initial: 'AwaitingPayment',
  final: ['Completed', 'Compensated'],
  data: fulfilmentData,
  initialData: (key) => ({ orderId: key, notes: [] }),
  messages: {
    PaymentCaptured: z.object({ ...orderId, paymentId: z.string().min(1) }),
    InventoryReserved: z.object({ ...orderId, reservationId: z.string().min(1) }),
    InventoryRejected: z.object({ ...orderId, reason: z.string() }),
    ShipmentBooked: z.object({ ...orderId, shipmentId: z.string().min(1) }),
    RefundCompleted: z.object(orderId),
    RefundFailed: z.object({ ...orderId, reason: z.string() }),
    CustomerNoteAdded: z.object({ ...orderId, note: z.string() }),
  },
  correlate: (m) => m.payload.orderId,
  timeouts: { ShipmentTimeout: { afterMs: shipmentTimeoutMs, expects: 'BookingShipment' } },
  on: {
    PaymentCaptured: [
      {
        from: 'AwaitingPayment',
        to: 'ReservingInventory',
        then: (d, p) => ({
          data: { ...d, paymentId: p.paymentId },
          emit: [{ type: 'ReserveInventory', destination: 'demo.inventory', payload: { orderId: d.orderId } }],
        }),
      },
    ],
    InventoryReserved: [
      {
        from: 'ReservingInventory',
        to: 'BookingShipment',
        schedule: ['ShipmentTimeout'],
        then: (d, p) => ({
          data: { ...d, reservationId: p.reservationId },
          emit: [
            {
              type: 'BookShipment',
              destination: 'demo.shipping',
              payload: { orderId: d.orderId, reservationId: p.reservationId },
            },
          ],
        }),
      },
    ],
    InventoryRejected: [{ from: 'ReservingInventory', to: 'Refunding', then: (d) => ({ emit: [refund(d)] }) }],
    ShipmentBooked: [
      { from: 'BookingShipment', to: 'Completed', then: (d, p) => ({ data: { ...d, shipmentId: p.shipmentId } }) },
      {
        from: 'Refunding',
        to: 'ManualReview',
        late: true,
        then: (d, p) => ({ data: { ...d, shipmentId: p.shipmentId } }),
      },
    ],
    ShipmentTimeout: [
      {
        from: 'BookingShipment',
        to: 'Refunding',
        then: (d) => ({
          emit: [
            refund(d),
            {
              type: 'ReleaseInventory',
              destination: 'demo.inventory',
              payload: { orderId: d.orderId, reservationId: d.reservationId ?? null },
            },
          ],
        }),
      },
    ],
    RefundCompleted: [{ from: 'Refunding', to: 'Compensated' }],
    RefundFailed: [
      { from: 'Refunding', to: 'ManualReview', then: (d, p) => ({ data: { ...d, refundFailure: p.reason } }) },
    ],
    CustomerNoteAdded: [
      takeNote('AwaitingPayment'),
      takeNote('ReservingInventory'),
      takeNote('BookingShipment'),
      takeNote('Refunding'),
      takeNote('ManualReview'),
    ],
  },
  compensating: { Refunding: ['Compensated', 'ManualReview'] },
  operatorInputs: {
    RetryRefund: z.object({}),
    AcceptLateBooking: z.object({ shipmentId: z.string().min(1) }),
  },
  operatorCommands: {
    RetryRefund: {
      from: ['ManualReview'],
      to: 'Refunding',
      description: 'Ask the payment provider for the refund again.',
      then: (d) => ({ emit: [refund(d)] }),
    },
    AcceptLateBooking: {
      from: ['ManualReview'],
      to: 'Completed',
      description: 'Keep the late shipment and complete the order.',
      then: (d, input) => ({ data: { ...d, shipmentId: input.shipmentId } }),
    },
  },
});
