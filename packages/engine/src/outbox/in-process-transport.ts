import type { OutboxEnvelope } from './outbox-envelope.ts';
import type { OutboxTransport } from './outbox-transport.ts';

/**
 * Delivers to a handler in this process: acknowledged when it resolves, retried when it throws.
 * At-least-once like every transport: a handler with effects should use {@link consumeOnce}.
 *
 * @example
 * const routes = { 'inventory': inProcessTransport(async (m) => reserveStock(m.payload)) };
 */
export function inProcessTransport(handler: (message: OutboxEnvelope) => Promise<void> | void): OutboxTransport {
  return {
    kind: 'in-process',
    async publish(message) {
      await handler(message);
    },
  };
}
