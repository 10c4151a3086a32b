import type { NatsConnection } from '@nats-io/transport-node';
import { EngineError } from '../errors/engine-error.ts';
import { encodeOutboxBody, type OutboxEnvelope } from './outbox-envelope.ts';
import type { OutboxTransport } from './outbox-transport.ts';

/**
 * The connection `connect({ servers })` from `@nats-io/transport-node` returns, described by the two
 * methods every version of it has: `@nats-io/transport-node` and `@nats-io/jetstream` are optional peer
 * dependencies of the engine (ADR 0128), so its declarations name none of their types and a host
 * without NATS needs neither package.
 */
export interface NatsConnectionLike {
  isClosed(): boolean;
  closed(): Promise<void | Error>;
}

export interface NatsJetStreamTransportOptions {
  /** A connection the host opened (`connect({ servers })` from `@nats-io/transport-node`) and closes. */
  connection: NatsConnectionLike;
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

/** The optional peer dependencies the transport loads (ADR 0128), as a host installs them. */
export const natsPeerPackages = ['@nats-io/transport-node', '@nats-io/jetstream'] as const;

/**
 * The JetStream client, loaded by a transport's first publish rather than when the engine is
 * imported: a host without NATS never holds its modules (~9 MB resident, ADR 0036). A failed load
 * fails the publish, which the publisher records and retries like any other failure; a package the
 * host did not install is said as such (`dependency_missing`, naming what to install).
 */
async function loadClient(connection: NatsConnectionLike) {
  const [{ jetstream }, { headers }] = await Promise.all([
    import('@nats-io/jetstream').catch(missingPeer),
    import('@nats-io/transport-node').catch(missingPeer),
  ]);
  return { js: jetstream(connection as NatsConnection), headers };
}

function missingPeer(cause: unknown): never {
  const code = (cause as { code?: unknown } | null)?.code;
  const message = cause instanceof Error ? cause.message : String(cause);
  const missing = natsPeerPackages.filter((name) => message.includes(`'${name}'`) || message.includes(`"${name}"`));
  if (code !== 'ERR_MODULE_NOT_FOUND' || missing.length === 0) throw cause;
  throw new EngineError(
    'dependency_missing',
    `the NATS JetStream transport needs ${missing.join(' and ')}, which this project does not have: ` +
      `install them with \`npm install ${natsPeerPackages.map((n) => `${n}@^3.4.0`).join(' ')}\` ` +
      `(optional peer dependencies of @sagaflow/engine; they need Node 22 or later).`,
    { cause, details: { install: [...natsPeerPackages] } },
  );
}
