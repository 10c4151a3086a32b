import { createHash } from 'node:crypto';
import { inProcessTransport, type Engine, type OutboxEnvelope, type OutboxTransport } from '@sagaflow/engine';
import type { Logger } from 'pino';
import { fulfilmentProcess } from './fulfilment-process.ts';

/** How the simulated services answer, decided per order so a redelivered command gets the same answer. */
export const serviceOdds = { inventoryRejects: 0.15, carrierSilent: 0.25, carrierLate: 0.5, refundFails: 0.2 };

/** A stable number in [0, 1) for an order and a question. */
export function roll(orderId: string, question: string): number {
  return createHash('sha256').update(`${orderId}:${question}`).digest().readUInt32BE(0) / 2 ** 32;
}

/** How late a late carrier books: after the shipment timeout has sent the order to Refunding. */
const lateBookingMs = 25_000;

/**
 * The demo's simulated inventory, carrier and payment services, as the outbox publisher's in-process
 * routes. Each answers a command by delivering a reply to the fulfilment process; the reply's id is
 * derived from the command's message id, so a command published twice yields one effect (the
 * process's inbox drops the duplicate). A carrier that stays silent lets the shipment timeout fire;
 * half of those book late, after the refund began.
 */
export function fulfilmentRoutes(
  engine: Engine,
  logger: Logger,
): {
  routes: Record<string, OutboxTransport>;
  stop: () => void;
} {
  const late = new Set<NodeJS.Timeout>();
  const reply = (m: OutboxEnvelope, type: string, payload: Record<string, string>) =>
    engine.processes.deliver(fulfilmentProcess, { id: `${m.messageId}/reply`, type, payload });
  const orderOf = (m: OutboxEnvelope) => (m.payload as { orderId: string }).orderId;

  const inventory = inProcessTransport(async (m) => {
    const orderId = orderOf(m);
    if (m.type === 'ReleaseInventory') return;
    if (roll(orderId, 'inventory') < serviceOdds.inventoryRejects)
      await reply(m, 'InventoryRejected', { orderId, reason: 'out of stock' });
    else await reply(m, 'InventoryReserved', { orderId, reservationId: `RES-${orderId.slice(0, 8)}` });
  });
  const shipping = inProcessTransport(async (m) => {
    const orderId = orderOf(m);
    const booked = { orderId, shipmentId: `SHP-${orderId.slice(0, 8)}` };
    if (roll(orderId, 'carrier') >= serviceOdds.carrierSilent) {
      await reply(m, 'ShipmentBooked', booked);
      return;
    }
    if (roll(orderId, 'late') < serviceOdds.carrierLate) {
      const timer = setTimeout(() => {
        late.delete(timer);
        reply(m, 'ShipmentBooked', booked).catch((err: unknown) =>
          logger.warn({ err, orderId }, 'demo carrier could not deliver its late booking'),
        );
      }, lateBookingMs);
      late.add(timer);
    }
  });
  const payments = inProcessTransport(async (m) => {
    const orderId = orderOf(m);
    // A retried refund (an operator's RetryRefund) goes through: the provider's outage was brief.
    const retried = m.messageId.includes('/operator:');
    if (!retried && roll(orderId, 'refund') < serviceOdds.refundFails)
      await reply(m, 'RefundFailed', { orderId, reason: 'the payment provider declined the refund' });
    else await reply(m, 'RefundCompleted', { orderId });
  });
  return {
    routes: { 'demo.inventory': inventory, 'demo.shipping': shipping, 'demo.payments': payments },
    stop: () => {
      for (const t of late) clearTimeout(t);
      late.clear();
    },
  };
}
