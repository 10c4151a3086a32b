import type { OutboxEnvelope } from './outbox-envelope.ts';

/**
 * Where the publisher hands a message. `publish` resolves only once the receiver acknowledged it
 * (a handler returned, a webhook answered 2xx, JetStream sent its PubAck); a rejection means "not
 * delivered, try again later". A transport may deliver and still reject (the ack was lost): the
 * publisher will deliver again, with the same message id, and the consumer dedupes (ADR 0009).
 */
export interface OutboxTransport {
  /** For logs: `in-process`, `webhook`, `nats-jetstream`. */
  readonly kind: string;
  publish(message: OutboxEnvelope): Promise<void>;
}
