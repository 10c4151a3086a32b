import { orderFulfilmentProcess } from '@sagaflow/engine/testing';

/** How long the demo waits for a carrier before it refunds (seed 004 says two hours; a demo cannot). */
export const shipmentTimeoutMs = 20_000;

/**
 * Seed 004's order fulfilment, the reference definition the engine's tests use, as the demo runs it:
 * PaymentCaptured → reserve inventory → InventoryReserved → book shipment (a shipment timeout armed)
 * → ShipmentBooked → Completed; InventoryRejected or the timeout → Refunding → RefundCompleted →
 * Compensated, or RefundFailed → ManualReview; a booking that arrives after the refund began is a
 * late message → ManualReview. Customer notes are taken in every open state; a note starting with
 * `poison` throws, every time (the demo's poison message).
 */
export const fulfilmentProcess = orderFulfilmentProcess({
  name: 'demo.fulfilment',
  shipmentTimeoutMs,
  route: (service) => `demo.${service}`,
});
