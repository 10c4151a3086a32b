import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeWebhookHeader } from '../../../../src/outbox/sign-webhook.ts';

/** One POST the sink received: which relay sent it (its path), the message id, and when (Date.now()). */
export interface Delivery {
  by: string;
  messageId: string;
  at: number;
  /** When the sink answered it (undefined while unanswered). */
  answeredAt?: number;
}

/**
 * Decides how the sink answers one delivery: resolves to the status code once it should answer. Runs for
 * every request; the default answers 200 at once.
 */
export type Answer = (delivery: Delivery) => Promise<number>;

/**
 * A real HTTP webhook receiver for review 68. Each relay posts to its own path (`/a`, `/b`), so every
 * delivery names the relay process that sent it. The test decides when (and how) each request is answered.
 */
export async function startTaggedSink() {
  const deliveries: Delivery[] = [];
  let answer: Answer = () => Promise.resolve(200);
  const server: Server = createServer((req, res) => {
    const by = (req.url ?? '/').replace(/^\//, '');
    const messageId = decodeWebhookHeader(String(req.headers['x-sagaflow-message-id'] ?? ''));
    req.resume();
    req.on('end', () => {
      const delivery: Delivery = { by, messageId, at: Date.now() };
      deliveries.push(delivery);
      void answer(delivery)
        .catch(() => 500)
        .then((status) => {
          delivery.answeredAt = Date.now();
          if (!res.destroyed) res.writeHead(status).end(status < 300 ? 'ok' : 'no');
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    /** The URL relay `tag` posts to. */
    url: (tag: string) => `http://127.0.0.1:${port}/${tag}`,
    deliveries,
    /** Who sent `messageId`, in arrival order. */
    senders: (messageId: string) => deliveries.filter((d) => d.messageId === messageId).map((d) => d.by),
    setAnswer: (next: Answer) => {
      answer = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
