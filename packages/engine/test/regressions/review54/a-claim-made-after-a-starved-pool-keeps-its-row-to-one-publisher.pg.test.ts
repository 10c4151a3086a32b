import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import { publishOutboxBatch } from '../../../src/outbox/publish-outbox-batch.ts';
import { webhookTransport } from '../../../src/outbox/webhook-transport.ts';
import { seedOutbox } from '../../outbox/seed-outbox.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { starvePool } from '../review53/support/liveness.ts';

/**
 * Review 54: a relay whose pool is starved while it is about to claim. ADR 0009 / 0103: a claim
 * owns its rows for `visibility_timeout_seconds` and a publish never runs past what is left of the
 * claim window, so no two publishers have one row out at the same time. The claim's window is
 * written from the time the pass began, before it waited for a connection; the publisher counts its
 * window from when the claim came back. After a wait longer than the window the row is claimable
 * by any other publisher the moment it is claimed.
 */
const config = {
  visibility_timeout_seconds: 2,
  transaction_timeout_ms: 10_000,
  publish_timeout_ms: 10_000,
  max_attempts: 5,
  backoff: { base_delay_ms: 50, max_delay_ms: 200 },
};

describe('review 54: an outbox claim that waited for a starved pool (real PostgreSQL, real HTTP destination)', () => {
  let admin: Database & { url?: string };
  let relayA: Database;
  let relayB: Database;
  let server: Server;
  let url = '';
  let answer: () => void = () => undefined;
  let answering = new Promise<void>((r) => (answer = r));
  const inFlight = new Map<string, number>();
  const arrivals: { id: string; overlapping: number }[] = [];
  let maxOverlap = 0;
  beforeAll(async () => {
    admin = await openTestDatabase({ poolSize: 2 });
    relayA = await createDatabase({ kind: 'postgres', url: admin.url!, poolSize: 1 });
    relayB = await createDatabase({ kind: 'postgres', url: admin.url!, poolSize: 2 });
    server = createServer((req: IncomingMessage, res) => {
      const id = String(req.headers['x-sagaflow-message-id']);
      const n = (inFlight.get(id) ?? 0) + 1;
      inFlight.set(id, n);
      maxOverlap = Math.max(maxOverlap, n);
      arrivals.push({ id, overlapping: n });
      req.resume();
      void answering.then(() => {
        inFlight.set(id, (inFlight.get(id) ?? 1) - 1);
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => {
    answer();
    await new Promise<void>((r) => server?.close(() => r()));
    await relayA?.close();
    await relayB?.close();
    await admin?.close();
  });

  it('a row claimed by a relay after its pool was starved past the claim window is never out from two relays at once', async () => {
    answering = new Promise<void>((r) => (answer = r));
    const [messageId] = await seedOutbox(admin, [{ sourceId: 'r54-order-1', destination: 'inventory' }]);
    const routes = { inventory: webhookTransport({ url, secret: 'r54-secret', timeoutMs: 10_000 }) };
    const logger = pino({ level: 'silent' });

    // The trouble: relay A's only connection is taken while it starts a pass.
    const starved = await starvePool(relayA, 1);
    const passA = publishOutboxBatch({ db: relayA, routes, config, logger, publisherId: 'relay-a' });
    await waitFor('relay A waiting for a connection', async () => (relayA.pool!.waitingCount > 0 ? true : undefined));
    // Starved for longer than the claim window (the trouble itself is the only wall-clock wait).
    await sleep(config.visibility_timeout_seconds * 1000 + 1000);
    starved.release();

    // Relay A claims and sends the row (it reaches the destination, which has not answered yet), or,
    // since review 54's fix, sees that its claim's window was spent waiting and sends nothing.
    const aEnded = passA.then(() => true);
    await waitFor('relay A to send the row, or to end its pass', async () =>
      arrivals.length >= 1 ? true : await Promise.race([aEnded, Promise.resolve(undefined)]),
    );
    const claimA = await admin.prisma.outboxMessage.findUniqueOrThrow({ where: { message_id: messageId } });
    const seenAt = new Date();

    // Relay B runs a pass while A's request is still out.
    const passB = publishOutboxBatch({ db: relayB, routes, config, logger, publisherId: 'relay-b' });
    const bClaimedNothing = passB.then((r) => (r.claimed === 0 ? true : undefined));
    const sentByA = arrivals.length;
    await waitFor('relay B to send the row, or to claim nothing', async () =>
      arrivals.length > sentByA ? true : await Promise.race([bClaimedNothing, Promise.resolve(undefined)]),
    );
    answer();
    const [a, b] = await Promise.all([passA, passB]);

    const row = await admin.prisma.outboxMessage.findUniqueOrThrow({ where: { message_id: messageId } });
    expect(row.status).toBe('Published');
    expect(arrivals.length).toBeGreaterThanOrEqual(1);
    // The guarantee: one row is never out from two relays at once.
    expect(
      { maxOverlap, arrivals, claimA: { attempts: claimA.attempts, available_at: claimA.available_at }, a, b },
      `the row was sent by relay B while relay A was still sending it under its own claim (A's claim wrote available_at ${claimA.available_at.toISOString()}, read at ${seenAt.toISOString()} while A's request was out)`,
    ).toMatchObject({ maxOverlap: 1 });
  });
});
