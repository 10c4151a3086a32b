import { randomUUID } from 'node:crypto';
import type { Engine } from '@sagaflow/engine';
import type { Logger } from 'pino';
import { fulfilmentProcess } from './fulfilment-process.ts';

/** Per tick: a new paid order; sometimes a customer note (half of them poison); sometimes a redelivery. */
const odds = { order: 0.6, note: 0.2, poison: 0.5, redelivery: 0.15 };
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
      const poison = Math.random() < odds.poison;
      const note = poison ? `poison: unparseable ${randomUUID().slice(0, 6)}` : 'please leave it with the neighbours';
      deliver({ id: `note-${randomUUID()}`, type: 'CustomerNoteAdded', payload: { orderId: earlier.orderId, note } });
    }
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  return () => {
    stopped = true;
    clearInterval(timer);
    for (const t of retries) clearTimeout(t);
    retries.clear();
  };
}
