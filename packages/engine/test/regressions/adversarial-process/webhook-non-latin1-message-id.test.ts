import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { publishOutboxBatch } from '../../../src/outbox/publish-outbox-batch.ts';
import { webhookTransport } from '../../../src/outbox/webhook-transport.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { clearOutbox, outboxRow } from '../../outbox/seed-outbox.ts';
import { msg, newOrderId, processManagerOn } from '../../process/support/process-harness.ts';

const logger = pino({ level: 'silent' });

/**
 * A command's outbox message id is `<process>/<causation message id>/<index>`, and the causation id
 * is whatever id the incoming feed used (parseMessage only asks for a non-blank string). The webhook
 * transport puts the message id (and type) in HTTP headers as is; fetch refuses header values outside
 * Latin-1, so the request is never sent: every attempt fails, and the row goes Dead.
 */
describe(`webhook publish of a command caused by a message with a non-Latin-1 id (e.g. Japanese) (${testDbKind()})`, () => {
  let db: Database;
  let server: Server;
  let url: string;
  const received: (string | undefined)[] = [];
  beforeAll(async () => {
    db = await openTestDatabase();
    server = createServer((req, res) => {
      received.push(req.headers['x-sagaflow-message-id'] as string | undefined);
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    url = await new Promise<string>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`)),
    );
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await db.close();
  });
  beforeEach(async () => {
    await clearOutbox(db);
  });

  it('the command is delivered to the webhook and marked Published', async () => {
    const clock = new TestClock(new Date(Date.now() + 1000));
    const { pm } = processManagerOn(db, { clock });
    const order = newOrderId();
    // An event id from an upstream system that uses the order's business key in its ids.
    const r = await pm.deliver('order-fulfilment', msg.paymentCaptured(order, `注文-支払い-${order}`));
    expect(r.outcome).toBe('applied');
    const messageId = `order-fulfilment/注文-支払い-${order}/0`;
    expect((await outboxRow(db, messageId)).status).toBe('Pending');

    const routes = { inventory: webhookTransport({ url, secret: 's3cret', timeoutMs: 2000 }) };
    const config = { max_attempts: 3, backoff: { base_delay_ms: 10, max_delay_ms: 10 } };
    for (let i = 0; i < 3; i++) {
      await publishOutboxBatch({ db, routes, clock, logger, config });
      clock.advance(10);
    }
    const row = await outboxRow(db, messageId);
    expect.soft(row.last_error).toBeNull();
    expect({ status: row.status, last_error: row.last_error, requests: received.length }).toMatchObject({
      status: 'Published',
      requests: 1,
    });
  });
});
