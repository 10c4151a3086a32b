import { randomUUID } from 'node:crypto';
import type { Engine } from '@sagaflow/engine';
import type { Logger } from 'pino';
import { fulfilmentProcess } from './fulfilment-process.ts';

/** Per tick: a new paid order; sometimes a note on a recent order, a redelivery, or a poison note. */
const odds = { order: 0.6, note: 0.2, redelivery: 0.15, poison: 0.12 };
/** A poisoned order's payment arrives after its instance was quarantined (10 s of failing). */
const latePaymentMs = 30_000;
/** How a broker would offer a failing message again: every few seconds, for a while. */
const redeliver = { everyMs: 3_000, times: 40 };

/**
 * Demo messages for the fulfilment process, as a message feed would deliver them: payments for new
 * orders, exact redeliveries (no-ops in the inbox), and customer notes for recent orders. A poison
 * note fails every time; like a broker, the feed offers it again until the process stops failing on
 * it, which with quarantine on means until the instance is quarantined. Returns a stop function.
 */
export function startFulfilmentTraffic(engine: Engine, logger: Logger, intervalMs: number): () => void {
  const recent: { orderId: string; paymentMessage: { id: string; type: string; payload: unknown } }[] = [];
  const retries = new Set<NodeJS.Timeout>();
  let stopped = false;

  const deliver = (message: { id: string; type: string; payload: unknown }, attempt = 1) => {
    engine.processes.deliver(fulfilmentProcess, message).then(
      (r) => {
        if (r.outcome === 'quarantined')
          logger.info({ instanceId: r.instanceId, messageId: message.id }, 'demo: an instance was quarantined');
      },
      (err: unknown) => {
        if (stopped || attempt >= redeliver.times) {
          logger.warn({ err, messageId: message.id }, 'demo feed gave up on a message');
          return;
        }
        const timer = setTimeout(() => {
          retries.delete(timer);
          deliver(message, attempt + 1);
        }, redeliver.everyMs);
        retries.add(timer);
      },
    );
  };

  const tick = () => {
    if (Math.random() < odds.order) {
      const orderId = randomUUID();
      const paymentMessage = {
        id: `payment-${orderId}`,
        type: 'PaymentCaptured',
        payload: { orderId, paymentId: `PAY-${orderId.slice(0, 8)}` },
      };
      recent.push({ orderId, paymentMessage });
      if (recent.length > 20) recent.shift();
      deliver(paymentMessage);
    }
    const earlier = recent[Math.floor(Math.random() * recent.length)];
    if (!earlier) return;
    if (Math.random() < odds.redelivery) deliver(earlier.paymentMessage);
    if (Math.random() < odds.note) {
      const note = 'please leave it with the neighbours';
      deliver({ id: `note-${randomUUID()}`, type: 'CustomerNoteAdded', payload: { orderId: earlier.orderId, note } });
    }
  };
  /**
   * A customer writes before paying, in a form the process cannot parse: the failure creates the
   * instance to hold its record, the feed keeps offering the note, and once the budget is spent the
   * instance is quarantined. Its payment, arriving later, is skipped.
   */
  const poisonOrder = () => {
    const orderId = randomUUID();
    const note = `poison: unparseable ${orderId.slice(0, 6)}`;
    deliver({ id: `note-${orderId}`, type: 'CustomerNoteAdded', payload: { orderId, note } });
    const timer = setTimeout(() => {
      retries.delete(timer);
      deliver({
        id: `payment-${orderId}`,
        type: 'PaymentCaptured',
        payload: { orderId, paymentId: `PAY-${orderId.slice(0, 8)}` },
      });
    }, latePaymentMs);
    retries.add(timer);
  };
  const everyTick = () => {
    tick();
    if (Math.random() < odds.poison) poisonOrder();
  };
  everyTick();
  poisonOrder();
  const timer = setInterval(everyTick, intervalMs);
  return () => {
    stopped = true;
    clearInterval(timer);
    for (const t of retries) clearTimeout(t);
    retries.clear();
  };
}
