import { z } from 'zod';
import { defineProcess, type EmittedCommand } from '../process/define-process.ts';

/** Thrown by the process for a poison note: a message this instance can never handle. */
export class PoisonNoteError extends Error {
  override readonly name = 'PoisonNoteError';
}

export type FulfilmentService = 'inventory' | 'shipping' | 'payments';

export interface OrderFulfilmentOptions {
  /** The process's name; default `order-fulfilment`. */
  name?: string;
  /** When the shipment timeout is due after the booking was requested; default two hours (seed 004). */
  shipmentTimeoutMs?: number;
  /** The outbox route of each service's commands; default the service's name. */
  route?: (service: FulfilmentService) => string;
  /** Which customer notes the process cannot handle (they throw PoisonNoteError); default `poison…`. */
  isPoison?: (note: string) => boolean;
}

/** Seed 004's deadline: no shipment within two hours and the business changes course. */
export const twoHours = 2 * 60 * 60 * 1000;

/**
 * Seed 004's order fulfilment as a process definition, the reference the tests and the demo share:
 *   PaymentCaptured → reserve inventory; InventoryReserved → book shipment (and arm a 2-hour
 *   shipment timeout); ShipmentBooked → Completed; InventoryRejected → refund;
 *   shipment timeout → Refunding → RefundCompleted → Compensated | RefundFailed → ManualReview.
 * A shipment booked after the refund started is a late message Refunding accepts: manual review.
 * `CustomerNoteAdded` is accepted in every open state and throws for a poison note, which is how the
 * tests (and a demo) make an instance keep failing. `isPoison` decides; a test can "fix the bug".
 */
export function orderFulfilmentProcess(options: OrderFulfilmentOptions = {}) {
  const isPoison = options.isPoison ?? ((note: string) => note.startsWith('poison'));
  const route = options.route ?? ((service: FulfilmentService) => service);
  const order = { orderId: z.string().min(1) };
  const data = z.object({
    orderId: z.string(),
    paymentId: z.string().optional(),
    reservationId: z.string().optional(),
    shipmentId: z.string().optional(),
    notes: z.array(z.string()).default([]),
    refundFailure: z.string().optional(),
  });
  type Data = z.output<typeof data>;
  const refund = (d: Data): EmittedCommand => ({
    type: 'RefundPayment',
    destination: route('payments'),
    payload: { orderId: d.orderId, paymentId: d.paymentId ?? null },
  });
  const releaseInventory = (d: Data): EmittedCommand => ({
    type: 'ReleaseInventory',
    destination: route('inventory'),
    payload: { orderId: d.orderId, reservationId: d.reservationId ?? null },
  });
  type Open = 'AwaitingPayment' | 'ReservingInventory' | 'BookingShipment' | 'Refunding' | 'ManualReview';
  const addNote = (state: Open) => ({
    from: state,
    to: state,
    then: (d: Data, p: { note: string }) => {
      if (isPoison(p.note)) throw new PoisonNoteError(`cannot handle note "${p.note}"`);
      return { data: { ...d, notes: [...d.notes, p.note] } };
    },
  });
  return defineProcess({
    name: options.name ?? 'order-fulfilment',
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
    data,
    initialData: (orderId) => ({ orderId, notes: [] }),
    messages: {
      PaymentCaptured: z.object({ ...order, paymentId: z.string().min(1) }),
      InventoryReserved: z.object({ ...order, reservationId: z.string().min(1) }),
      InventoryRejected: z.object({ ...order, reason: z.string() }),
      ShipmentBooked: z.object({ ...order, shipmentId: z.string().min(1) }),
      RefundCompleted: z.object({ ...order }),
      RefundFailed: z.object({ ...order, reason: z.string() }),
      CustomerNoteAdded: z.object({ ...order, note: z.string() }),
    },
    correlate: (m) => m.payload.orderId,
    timeouts: { ShipmentTimeout: { afterMs: options.shipmentTimeoutMs ?? twoHours, expects: 'BookingShipment' } },
    on: {
      PaymentCaptured: [
        {
          from: 'AwaitingPayment',
          to: 'ReservingInventory',
          then: (d, p) => ({
            data: { ...d, paymentId: p.paymentId },
            emit: [{ type: 'ReserveInventory', destination: route('inventory'), payload: { orderId: d.orderId } }],
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
                destination: route('shipping'),
                payload: { orderId: d.orderId, reservationId: p.reservationId },
              },
            ],
          }),
        },
      ],
      InventoryRejected: [
        {
          from: 'ReservingInventory',
          to: 'Refunding',
          then: (d) => ({
            emit: [refund(d)],
          }),
        },
      ],
      ShipmentBooked: [
        { from: 'BookingShipment', to: 'Completed', then: (d, p) => ({ data: { ...d, shipmentId: p.shipmentId } }) },
        // Late: the carrier booked after the refund began. Policy: a person decides.
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
            emit: [refund(d), releaseInventory(d)],
          }),
        },
      ],
      RefundCompleted: [{ from: 'Refunding', to: 'Compensated' }],
      RefundFailed: [
        { from: 'Refunding', to: 'ManualReview', then: (d, p) => ({ data: { ...d, refundFailure: p.reason } }) },
      ],
      CustomerNoteAdded: [
        addNote('AwaitingPayment'),
        addNote('ReservingInventory'),
        addNote('BookingShipment'),
        addNote('Refunding'),
        addNote('ManualReview'),
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
        then: (d) => ({
          emit: [refund(d)],
        }),
      },
      AcceptLateBooking: {
        from: ['ManualReview'],
        to: 'Completed',
        description: 'Keep the late shipment and complete the order.',
        then: (d, input) => ({ data: { ...d, shipmentId: input.shipmentId } }),
      },
    },
  });
}
