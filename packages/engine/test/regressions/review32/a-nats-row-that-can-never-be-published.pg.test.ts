import { randomUUID } from 'node:crypto';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startNatsServer, type NatsServer } from '@sagaflow/test-nats';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { natsJetStreamTransport } from '../../../src/outbox/nats-jetstream-transport.ts';
import { publishOutboxBatch } from '../../../src/outbox/publish-outbox-batch.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { clearOutbox, outboxRow, seedOutbox } from '../../outbox/seed-outbox.ts';
import { openTestDatabase } from '../../support/test-database.ts';

const logger = pino({ level: 'silent' });

/** Every message id in `stream`, in stream order. */
async function streamIds(jsm: JetStreamManager, stream: string): Promise<string[]> {
  const info = await jsm.streams.info(stream);
  const out: string[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const m = await jsm.streams.getMessage(stream, { seq });
    if (m !== null) out.push(m.header.get('Nats-Msg-Id'));
  }
  return out;
}

/**
 * ADR 0009: a poison message blocks its own source until it is Dead (max_attempts), with its
 * last_error visible; a Dead row stops holding its source back; other sources are unaffected.
 */
describe('review 32: NATS rows that can never be published', () => {
  let server: NatsServer;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let db: Database;
  let clock: TestClock;
  beforeAll(async () => {
    server = await startNatsServer();
    nc = await connect({ servers: server.url });
    jsm = await jetstreamManager(nc);
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db?.close();
    await nc?.close();
    await server?.stop();
  });
  beforeEach(async () => {
    await clearOutbox(db);
    for await (const name of jsm.streams.names()) await jsm.streams.delete(name);
    await jsm.streams.add({ name: 'SAGAFLOW', subjects: ['sagaflow.>'], max_msg_size: 64 * 1024 });
    clock = new TestClock(new Date(Date.now() + 1000));
  });
  const pass = () =>
    publishOutboxBatch({
      db,
      routes: { shipping: natsJetStreamTransport({ connection: nc, ackTimeoutMs: 3000 }) },
      clock,
      logger,
      config: { batch_size: 10, max_attempts: 2, backoff: { base_delay_ms: 1000, max_delay_ms: 1000 } },
    });
  /** Passes until nothing is claimed, moving the clock past each backoff. */
  const drain = async () => {
    for (let i = 0; i < 6; i++) {
      await pass();
      clock.advance(1000);
    }
  };

  it.each([
    ['over the server’s max_payload (1 MB)', 2 * 1024 * 1024, /max.?payload/i],
    ['over the stream’s max_msg_size (64 KB)', 100 * 1024, /size|maximum/i],
  ])(
    'a row %s goes Dead with the reason in last_error, its source’s next row and another source go out',
    async (_what, size, reason) => {
      const [big, next] = await seedOutbox(db, [
        { sourceId: 'big', destination: 'shipping', payload: { blob: 'x'.repeat(size) } },
        { sourceId: 'big', destination: 'shipping' },
      ]);
      const [other] = await seedOutbox(db, [{ sourceId: 'other', destination: 'shipping' }]);

      await drain();

      const row = await outboxRow(db, big!);
      expect({ status: row.status, attempts: row.attempts }).toEqual({ status: 'Dead', attempts: 2 });
      expect(row.last_error).toMatch(reason);
      expect((await outboxRow(db, next!)).status).toBe('Published');
      expect(new Set(await streamIds(jsm, 'SAGAFLOW'))).toEqual(new Set([next, other]));
      expect(nc.isClosed()).toBe(false);
    },
  );

  it('a destination whose subject is not valid (a space) fails only its own row; the shared connection keeps publishing', async () => {
    const [bad] = await seedOutbox(db, [{ sourceId: 'bad', destination: 'ship ping' }]);
    const [good] = await seedOutbox(db, [{ sourceId: 'good', destination: 'shipping' }]);
    const transport = natsJetStreamTransport({ connection: nc, ackTimeoutMs: 3000 });
    await publishOutboxBatch({
      db,
      routes: { shipping: transport, 'ship ping': transport },
      clock,
      logger,
      config: { batch_size: 10, max_attempts: 2 },
    });
    const [later] = await seedOutbox(db, [{ sourceId: 'later', destination: 'shipping' }]);
    await publishOutboxBatch({ db, routes: { shipping: transport }, clock, logger });

    expect({
      bad: (await outboxRow(db, bad!)).status,
      good: (await outboxRow(db, good!)).status,
      later: (await outboxRow(db, later!)).status,
      closed: nc.isClosed(),
    }).toEqual({ bad: 'Pending', good: 'Published', later: 'Published', closed: false });
    expect((await outboxRow(db, bad!)).last_error).toMatch(/ship ping/);
  });

  it('a header value with a line break is a visible failure of its row, not a silent loss (held)', async () => {
    const messageId = randomUUID();
    await db.prisma.outboxMessage.create({
      data: {
        message_id: messageId,
        source_kind: 'process',
        source_id: 'hdr',
        type: 'Ship',
        destination: 'shipping',
        payload: {},
        headers: { 'x-trace': 'a\r\nNats-Msg-Id: forged' },
      },
    });
    await pass();
    const row = await outboxRow(db, messageId);
    const ids = await streamIds(jsm, 'SAGAFLOW');
    // Either refused (visible) or sent with the real message id, never under a forged one.
    if (row.status === 'Published') expect(ids).toEqual([messageId]);
    else expect(row.last_error).not.toBeNull();
    expect(ids).not.toContain('forged');
  });
});
