import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { publishOutboxBatch } from '../../src/outbox/publish-outbox-batch.ts';
import { verifyWebhookSignature, webhookHeaders } from '../../src/outbox/sign-webhook.ts';
import { webhookTransport } from '../../src/outbox/webhook-transport.ts';
import { TestClock } from '../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';
import { clearOutbox, outboxRow, seedOutbox } from './seed-outbox.ts';

const logger = pino({ level: 'silent' });
const secret = 'shared-secret-for-tests';

interface Received {
  messageId: string | undefined;
  verified: boolean;
  body: string;
}

/** A real receiver on 127.0.0.1 that checks the HMAC and answers as `respond` says. */
function startReceiver(respond: (req: IncomingMessage, res: ServerResponse) => Promise<void> | void) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const header = (name: string) => {
        const value = req.headers[name];
        return Array.isArray(value) ? value[0] : value;
      };
      received.push({
        messageId: header(webhookHeaders.messageId),
        body,
        verified: verifyWebhookSignature({
          secret,
          body,
          timestamp: header(webhookHeaders.timestamp),
          signature: header(webhookHeaders.signature),
        }),
      });
      void Promise.resolve(respond(req, res)).catch(() => res.destroy());
    });
  });
  return { server, received };
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`));
  });
}

describe(`webhook transport against a real HTTP receiver (${testDbKind()})`, () => {
  let db: Database;
  let clock: TestClock;
  let mode: 'ok' | 'slow' | 'error';
  const receiver = startReceiver(async (_req, res) => {
    if (mode === 'slow') await sleep(1000);
    res.statusCode = mode === 'error' ? 500 : 204;
    res.end(mode === 'error' ? 'database is down' : undefined);
  });
  let url: string;
  beforeAll(async () => {
    db = await openTestDatabase();
    url = await listen(receiver.server);
  });
  afterAll(async () => {
    receiver.server.closeAllConnections();
    await new Promise((r) => receiver.server.close(r));
    await db.close();
  });
  beforeEach(async () => {
    await clearOutbox(db);
    receiver.received.length = 0;
    clock = new TestClock(new Date(Date.now() + 1000));
    mode = 'ok';
  });
  const pass = (timeoutMs = 2000) =>
    publishOutboxBatch({
      db,
      routes: { billing: webhookTransport({ url, secret, timeoutMs }) },
      clock,
      logger,
      config: { backoff: { base_delay_ms: 1000, max_delay_ms: 1000 } },
    });

  it('the receiver verifies the HMAC over timestamp and body, and gets the message id in a header', async () => {
    const [id] = await seedOutbox(db, [{ destination: 'billing', type: 'ChargeCard', payload: { amount: 42 } }]);
    expect(await pass()).toMatchObject({ claimed: 1, published: 1 });
    expect(receiver.received).toHaveLength(1);
    const [request] = receiver.received;
    expect(request).toMatchObject({ messageId: id, verified: true });
    expect(JSON.parse(request!.body)).toMatchObject({ messageId: id, type: 'ChargeCard', payload: { amount: 42 } });
    expect(await outboxRow(db, id!)).toMatchObject({ status: 'Published' });
  });

  it('a receiver slower than the timeout fails the attempt, which is retried and then succeeds', async () => {
    const [id] = await seedOutbox(db, [{ destination: 'billing' }]);
    mode = 'slow';
    expect(await pass(150)).toMatchObject({ claimed: 1, retried: 1, published: 0 });
    expect(await outboxRow(db, id!)).toMatchObject({
      status: 'Pending',
      attempts: 1,
      last_error: `webhook ${url} did not answer within 150 ms`,
    });
    mode = 'ok';
    clock.advance(1000);
    expect(await pass(150)).toMatchObject({ claimed: 1, published: 1 });
    expect(await outboxRow(db, id!)).toMatchObject({ status: 'Published', attempts: 2 });
  });

  it('a 500 is a failed attempt with the status in last_error; the retry that gets a 2xx publishes', async () => {
    const [id] = await seedOutbox(db, [{ destination: 'billing' }]);
    mode = 'error';
    expect(await pass()).toMatchObject({ claimed: 1, retried: 1 });
    expect(await outboxRow(db, id!)).toMatchObject({
      status: 'Pending',
      last_error: `webhook ${url} answered 500: database is down`,
    });
    mode = 'ok';
    clock.advance(1000);
    expect(await pass()).toMatchObject({ published: 1 });
    expect(receiver.received.map((r) => [r.messageId, r.verified])).toEqual([
      [id, true],
      [id, true],
    ]);
    expect(await outboxRow(db, id!)).toMatchObject({ status: 'Published', attempts: 2 });
  });
});
