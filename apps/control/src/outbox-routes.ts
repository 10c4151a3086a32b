import { natsJetStreamTransport, webhookTransport, type OutboxTransport } from '@sagaflow/engine';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ControlEnv } from './env.ts';

/**
 * The outbox routes configured in SAGAFLOW_OUTBOX_ROUTES, as transports: signed webhooks, and NATS
 * JetStream subjects over one connection to SAGAFLOW_NATS_URL. `close` drains that connection.
 */
export async function openOutboxRoutes(
  env: Pick<ControlEnv, 'outboxRoutes' | 'SAGAFLOW_NATS_URL'>,
): Promise<{ routes: Record<string, OutboxTransport>; close: () => Promise<void> }> {
  const entries = Object.entries(env.outboxRoutes);
  let nats: NatsConnection | null = null;
  if (entries.some(([, r]) => r.kind === 'nats') && env.SAGAFLOW_NATS_URL) {
    try {
      // Loaded only when a NATS route is configured: the client's modules stay out of every other
      // control plane's memory (ADR 0036).
      const { connect } = await import('@nats-io/transport-node');
      nats = await connect({ servers: env.SAGAFLOW_NATS_URL, maxReconnectAttempts: -1 });
    } catch (err) {
      throw new Error(
        `SAGAFLOW_NATS_URL: cannot reach the NATS server at ${env.SAGAFLOW_NATS_URL} (${err instanceof Error ? err.message : String(err)}); start it or fix the URL`,
        { cause: err },
      );
    }
  }
  const routes: Record<string, OutboxTransport> = {};
  for (const [name, r] of entries) {
    if (r.kind === 'webhook') {
      routes[name] = webhookTransport({
        url: r.url,
        secret: r.secret,
        ...(r.timeout_ms === undefined ? {} : { timeoutMs: r.timeout_ms }),
      });
    } else if (nats) {
      const subject = r.subject ?? `sagaflow.${name}`;
      routes[name] = natsJetStreamTransport({ connection: nats, subject: () => subject });
    }
  }
  return {
    routes,
    close: async () => {
      await nats?.drain();
    },
  };
}
