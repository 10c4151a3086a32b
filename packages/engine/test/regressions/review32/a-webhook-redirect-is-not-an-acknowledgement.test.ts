import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { publishOutboxBatch } from '../../../src/outbox/publish-outbox-batch.ts';
import { webhookHeaders } from '../../../src/outbox/sign-webhook.ts';
import { webhookTransport } from '../../../src/outbox/webhook-transport.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { clearOutbox, outboxRow, seedOutbox } from '../../outbox/seed-outbox.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';

const logger = pino({ level: 'silent' });
const secret = 'review32-secret';

interface Hit {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** A real HTTP server on 127.0.0.1 that records every request and answers as `respond` says. */
async function startServer(respond: (hit: Hit, res: ServerResponse) => void) {
  const hits: Hit[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hit = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
      hits.push(hit);
      respond(hit, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    hits,
    base,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

const header = (h: IncomingMessage['headers'], name: string) => {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
};

describe(`review 32: what a webhook counts as acknowledged (${testDbKind()})`, () => {
  let db: Database;
  let clock: TestClock;
  let answer: (hit: Hit, res: ServerResponse) => void;
  let receiver: Awaited<ReturnType<typeof startServer>>;
  let elsewhere: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    db = await openTestDatabase();
    receiver = await startServer((hit, res) => answer(hit, res));
    // Another origin: a redirect target that answers 200 to anything.
    elsewhere = await startServer((_hit, res) => {
      res.statusCode = 200;
      res.end('ok');
    });
  });
  afterAll(async () => {
    await receiver.close();
    await elsewhere.close();
    await db.close();
  });
  beforeEach(async () => {
    await clearOutbox(db);
    receiver.hits.length = 0;
    elsewhere.hits.length = 0;
    clock = new TestClock(new Date(Date.now() + 1000));
  });

  const pass = () =>
    publishOutboxBatch({
      db,
      routes: { billing: webhookTransport({ url: `${receiver.base}/hook`, secret, timeoutMs: 3000 }) },
      clock,
      logger,
      config: { backoff: { base_delay_ms: 1000, max_delay_ms: 1000 } },
    });

  it('a 302 to a page that answers GET with 200 is not an acknowledgement: the POST body never arrived', async () => {
    answer = (hit, res) => {
      if (hit.path === '/hook') {
        res.statusCode = 302;
        res.setHeader('location', '/login');
        res.end();
      } else {
        res.statusCode = 200; // a login page, a load balancer's landing page...
        res.end('<html>please sign in</html>');
      }
    };
    const [id] = await seedOutbox(db, [{ destination: 'billing', payload: { amount: 42 } }]);

    await pass();

    // The only POST that carried the message was answered 302; what answered 200 was another request.
    expect(receiver.hits[0]).toMatchObject({ method: 'POST', path: '/hook' });
    expect(receiver.hits.filter((h) => h.method === 'POST' && h.path !== '/hook')).toEqual([]);
    const row = await outboxRow(db, id!);
    // Expected: a failed attempt (3xx is not 2xx, ADR 0009), retried; not Published.
    expect({ status: row.status, lastError: row.last_error }).toEqual({
      status: 'Pending',
      lastError: expect.stringContaining('302') as unknown,
    });
  });

  it('a 307 to another origin is not an acknowledgement, and the signed message is not handed to that origin', async () => {
    answer = (_hit, res) => {
      res.statusCode = 307;
      res.setHeader('location', `${elsewhere.base}/collect`);
      res.end();
    };
    const [id] = await seedOutbox(db, [{ destination: 'billing', payload: { card: 'tok_123' } }]);

    await pass();

    const row = await outboxRow(db, id!);
    expect({
      status: row.status,
      sentElsewhere: elsewhere.hits.map(
        (h) =>
          `${h.method} ${h.path} ${h.body.length > 0} ${header(h.headers, webhookHeaders.signature) !== undefined}`,
      ),
    }).toEqual({ status: 'Pending', sentElsewhere: [] });
  });

  it('a 410 and a 404 are failed attempts with the status recorded (held)', async () => {
    let status = 410;
    answer = (_hit, res) => {
      res.statusCode = status;
      res.end('gone');
    };
    const [a] = await seedOutbox(db, [{ destination: 'billing', sourceId: 's-410' }]);
    await pass();
    status = 404;
    const [b] = await seedOutbox(db, [{ destination: 'billing', sourceId: 's-404' }]);
    await pass();
    expect((await outboxRow(db, a!)).last_error).toContain('answered 410: gone');
    expect((await outboxRow(db, b!)).last_error).toContain('answered 404: gone');
    expect((await outboxRow(db, a!)).status).toBe('Pending');
  });

  it('non-ASCII, 1 MB payload: the signature checks by an independent HMAC over the raw bytes, and a retry carries the same bytes and id (held)', async () => {
    let fail = true;
    answer = (_hit, res) => {
      res.statusCode = fail ? 503 : 204;
      res.end();
    };
    const big = '注文-ü-🚚-'.repeat(60_000);
    const messageId = 'mensaje-ñ-注文-1';
    await seedOutbox(db, [{ destination: 'billing', messageId, type: 'Réserver', payload: { big, nul: 'a\u2028b' } }]);

    await pass();
    fail = false;
    clock.advance(1000);
    await pass();

    expect(receiver.hits).toHaveLength(2);
    for (const hit of receiver.hits) {
      const ts = header(hit.headers, webhookHeaders.timestamp)!;
      const expected = `v1=${createHmac('sha256', secret)
        .update(Buffer.concat([Buffer.from(`${ts}.`), hit.body]))
        .digest('hex')}`;
      expect(header(hit.headers, webhookHeaders.signature)).toBe(expected);
      expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(60);
      expect(decodeURIComponent(header(hit.headers, webhookHeaders.messageId)!)).toBe(messageId);
      expect(decodeURIComponent(header(hit.headers, webhookHeaders.messageType)!)).toBe('Réserver');
    }
    expect(receiver.hits[0]!.body.equals(receiver.hits[1]!.body)).toBe(true);
    const body = JSON.parse(receiver.hits[1]!.body.toString('utf8')) as { messageId: string; payload: { big: string } };
    expect(body.messageId).toBe(messageId);
    expect(body.payload.big).toBe(big);
    expect((await outboxRow(db, messageId)).status).toBe('Published');
  });

  it.each([
    ['answers 500 and trickles its body forever', 500],
    ['answers 200 and trickles its body forever', 200],
  ])('a receiver that %s: the attempt ends within the timeout (held)', async (_what, status) => {
    const timers: NodeJS.Timeout[] = [];
    answer = (_hit, res) => {
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.write('x');
      timers.push(setInterval(() => res.write('x'), 50));
    };
    const transport = webhookTransport({ url: `${receiver.base}/hook`, secret, timeoutMs: 1000 });
    const started = performance.now();
    const outcome = await transport
      .publish({
        id: 'r',
        messageId: 'm-trickle',
        type: 'T',
        destination: 'billing',
        sourceKind: 'process',
        sourceId: 's',
        payload: {},
        headers: {},
        attempt: 1,
        createdAt: new Date(),
      })
      .then(
        () => 'acknowledged',
        (err: unknown) => (err instanceof Error ? err.message : String(err)),
      );
    const elapsed = performance.now() - started;
    for (const t of timers) clearInterval(t);
    expect(elapsed).toBeLessThan(3000);
    if (status === 200) expect(outcome).toBe('acknowledged');
    else expect(outcome).toMatch(/answered 500/);
  });
});
