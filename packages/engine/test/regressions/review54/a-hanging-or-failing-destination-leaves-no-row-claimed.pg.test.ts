import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { startOutboxPublisher, type OutboxPublisher } from '../../../src/outbox/start-outbox-publisher.ts';
import { webhookTransport } from '../../../src/outbox/webhook-transport.ts';
import { seedOutbox } from '../../outbox/seed-outbox.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

/**
 * Review 54: real HTTP destinations in trouble. One never answers, one answers 500 twice then
 * recovers, one is healthy. Within a bound every row is Published or Dead with its reason; none is
 * left claimed; the recovering destination gets each message acknowledged once, in order.
 */
const config = {
  poll_interval_ms: 50,
  visibility_timeout_seconds: 2,
  publish_timeout_ms: 300,
  max_attempts: 3,
  backoff: { base_delay_ms: 50, max_delay_ms: 200 },
};

describe('review 54: hanging and failing webhook destinations (real PostgreSQL, real HTTP servers)', () => {
  let db: Database & { url?: string };
  let server: Server;
  let base = '';
  let publisher: OutboxPublisher | undefined;
  const hung: ServerResponse[] = [];
  const acked: string[] = [];
  let failuresLeft = 2;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 4 });
    server = createServer((req, res) => {
      req.resume();
      const id = String(req.headers['x-sagaflow-message-id']);
      if (req.url === '/hang') return void hung.push(res);
      if (req.url === '/flaky' && failuresLeft > 0) {
        failuresLeft--;
        return void res.writeHead(500).end('down');
      }
      acked.push(`${req.url}:${id}`);
      res.writeHead(200).end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await publisher?.stop().catch(() => undefined);
    for (const r of hung) r.destroy();
    server?.closeAllConnections();
    await new Promise<void>((r) => server?.close(() => r()));
    await db?.close();
  });

  it('every row ends Published or Dead with its reason; none stays claimed; a recovered destination gets each once, in order', async () => {
    const hangIds = await seedOutbox(db, [{ sourceId: 'r54-hang', destination: 'hang' }]);
    const flakyIds = await seedOutbox(
      db,
      [0, 1, 2].map((n) => ({ sourceId: 'r54-flaky', destination: 'flaky', payload: { n } })),
    );
    const okIds = await seedOutbox(db, [{ sourceId: 'r54-ok', destination: 'ok' }]);
    const t = (path: string) => webhookTransport({ url: `${base}/${path}`, secret: 'r54', timeoutMs: 60_000 });
    publisher = startOutboxPublisher({
      db,
      routes: { hang: t('hang'), flaky: t('flaky'), ok: t('ok') },
      config,
      logger: pino({ level: 'silent' }),
    });
    const rows = await waitFor(
      'every row Published or Dead',
      async () => {
        const all = await db.prisma.outboxMessage.findMany({ orderBy: { seq: 'asc' } });
        return all.every((r) => r.status !== 'Pending') ? all : undefined;
      },
      20_000,
    );
    await publisher.stop();
    publisher = undefined;
    const byId = new Map(rows.map((r) => [r.message_id, r]));
    expect(hangIds.map((id) => ({ status: byId.get(id)!.status, attempts: byId.get(id)!.attempts }))).toEqual([
      { status: 'Dead', attempts: 3 },
    ]);
    expect(byId.get(hangIds[0]!)!.last_error).toMatch(/did not acknowledge within|timeout|abort/i);
    expect([...flakyIds, ...okIds].map((id) => byId.get(id)!.status)).toEqual(
      flakyIds.concat(okIds).map(() => 'Published'),
    );
    expect(acked.filter((a) => a.startsWith('/flaky:'))).toEqual(flakyIds.map((id) => `/flaky:${id}`));
    expect(acked.filter((a) => a.startsWith('/ok:'))).toEqual(okIds.map((id) => `/ok:${id}`));
  });
});
