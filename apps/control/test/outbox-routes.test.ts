import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { verifyWebhookSignature, webhookHeaders } from '@sagaflow/engine';
import { startNatsServer, type NatsServer } from '@sagaflow/test-nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import './provided-context.ts';
import { testDatabaseUrl } from './support/test-plane.ts';
import { fulfilmentProcess } from '../src/demo/fulfilment-process.ts';
import { parseEnv } from '../src/env.ts';
import { startControlPlane, type ControlPlane } from '../src/start-control-plane.ts';

const secret = 'webhook-secret-for-tests';

/** A receiver that checks each request's signature and keeps what it got. */
function startReceiver(): Promise<{
  server: Server;
  url: string;
  got: { type: string; messageId: string; valid: boolean; body: string }[];
}> {
  const got: { type: string; messageId: string; valid: boolean; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const header = (name: string) => {
        const v = req.headers[name.toLowerCase()];
        return Array.isArray(v) ? v[0] : v;
      };
      got.push({
        type: header(webhookHeaders.messageType) ?? '',
        messageId: header(webhookHeaders.messageId) ?? '',
        valid: verifyWebhookSignature({
          secret,
          body,
          timestamp: header(webhookHeaders.timestamp),
          signature: header(webhookHeaders.signature),
        }),
        body,
      });
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, got }),
    ),
  );
}

describe('configured outbox routes: a signed webhook and a NATS JetStream subject (PostgreSQL, nats-server)', () => {
  let nats: NatsServer;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let plane: ControlPlane;
  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connect({ servers: nats.url });
    jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'INVENTORY', subjects: ['inventory.commands'] });
    receiver = await startReceiver();
    const url = await testDatabaseUrl('routes');
    plane = await startControlPlane(
      parseEnv({
        DATABASE_URL: url,
        CONTROL_PORT: '0',
        LOG_LEVEL: 'silent',
        SAGAFLOW_NATS_URL: nats.url,
        SAGAFLOW_OUTBOX_ROUTES: JSON.stringify({
          'demo.inventory': { kind: 'nats', subject: 'inventory.commands' },
          'demo.payments': { kind: 'webhook', url: receiver.url, secret, timeout_ms: 2000 },
        }),
      }),
    );
  });
  afterAll(async () => {
    await plane?.stop();
    await nc?.close();
    await nats?.stop();
    receiver?.server.close();
  });

  const published = async (sourceId: string, type: string) => {
    for (let i = 0; i < 200; i++) {
      const row = await plane.db.prisma.outboxMessage.findFirst({ where: { source_id: sourceId, type } });
      if (row?.status === 'Published') return row;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`${type} of ${sourceId} was not published`);
  };

  it('a command routed to NATS lands in its stream once, with the outbox message id as Nats-Msg-Id', async () => {
    const orderId = randomUUID();
    const r = await plane.engine.processes.deliver(fulfilmentProcess, {
      id: `payment-${orderId}`,
      type: 'PaymentCaptured',
      payload: { orderId, paymentId: 'PAY-1' },
    });
    const row = await published(r.instanceId ?? '', 'ReserveInventory');
    const info = await jsm.streams.info('INVENTORY');
    const messages = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const m = await jsm.streams.getMessage('INVENTORY', { seq });
      if (m) messages.push({ id: m.header.get('Nats-Msg-Id'), body: m.json<{ payload: { orderId: string } }>() });
    }
    const mine = messages.filter((m) => m.body.payload.orderId === orderId);
    expect(mine).toEqual([
      { id: row.message_id, body: expect.objectContaining({ type: 'ReserveInventory' }) as unknown },
    ]);
  });

  it('a command routed to a webhook arrives signed, and the row is marked Published on the 2xx', async () => {
    const orderId = randomUUID();
    const deliver = (id: string, type: string, payload: Record<string, string>) =>
      plane.engine.processes.deliver(fulfilmentProcess, { id, type, payload });
    const { instanceId } = await deliver(`payment-${orderId}`, 'PaymentCaptured', { orderId, paymentId: 'PAY-2' });
    // The inventory service answers over NATS in real life; here the test answers for it.
    await deliver(`rejected-${orderId}`, 'InventoryRejected', { orderId, reason: 'out of stock' });
    const row = await published(instanceId ?? '', 'RefundPayment');
    const hit = receiver.got.find((g) => g.messageId === row.message_id);
    expect(hit).toMatchObject({ type: 'RefundPayment', valid: true });
    expect(JSON.parse(hit?.body ?? '{}')).toMatchObject({ payload: { orderId } });
  });
});
