import type { NatsConnection } from '@nats-io/transport-node';
import { EngineError } from '../errors/engine-error.ts';
import { encodeOutboxBody, type OutboxEnvelope } from './outbox-envelope.ts';
import type { OutboxTransport } from './outbox-transport.ts';

export interface NatsJetStreamTransportOptions {
  /** A connection the host opened (`connect({ servers })` from `@nats-io/transport-node`) and closes. */
  connection: NatsConnection;
  /** Subject for a message; a stream must capture it. Default `sagaflow.<destination>`. */
  subject?: (message: OutboxEnvelope) => string;
  /** How long to wait for the PubAck. Default 5 s. */
  ackTimeoutMs?: number;
}

/**
 * Publishes to NATS JetStream and waits for the stream's PubAck. The `Nats-Msg-Id` header is the
 * message id, so a redelivery inside the stream's duplicate window is dropped by the server itself
 * (the PubAck says `duplicate`, which counts as delivered); outside the window the consumer's inbox
 * dedupes. No stream capturing the subject = a failure ("no responders"), retried.
 *
 * @example
 * const nc = await connect({ servers: 'nats://127.0.0.1:4222' });
 * const routes = { shipping: natsJetStreamTransport({ connection: nc }) };
 */
export function natsJetStreamTransport(options: NatsJetStreamTransportOptions): OutboxTransport {
  let client: ReturnType<typeof loadClient> | undefined;
  const subjectOf = options.subject ?? ((m: OutboxEnvelope) => `sagaflow.${m.destination}`);
  return {
    kind: 'nats-jetstream',
    async publish(message) {
      const { js, headers } = await (client ??= loadClient(options.connection));
      const h = headers();
      h.set('Sagaflow-Message-Type', message.type);
      h.set('Sagaflow-Source', `${message.sourceKind}/${message.sourceId}`);
      for (const [key, value] of Object.entries(message.headers)) h.set(key, value);
      try {
        await js.publish(subjectOf(message), encodeOutboxBody(message), {
          msgID: message.messageId,
          headers: h,
          timeout: options.ackTimeoutMs ?? 5_000,
        });
      } catch (cause) {
        throw new EngineError(
          'outbox_publish_failed',
          `JetStream publish of ${message.messageId} to ${subjectOf(message)} failed: ${
            cause instanceof Error ? cause.message : String(cause)
          }`,
          { cause },
        );
      }
    },
  };
}

/**
 * The JetStream client, loaded by a transport's first publish rather than when the engine is
 * imported: a host without NATS never holds its modules (~9 MB resident, ADR 0036). A failed load
 * fails the publish, which the publisher records and retries like any other failure.
 */
async function loadClient(connection: NatsConnection) {
  const [{ jetstream }, { headers }] = await Promise.all([
    import('@nats-io/jetstream'),
    import('@nats-io/transport-node'),
  ]);
  return { js: jetstream(connection), headers };
}
