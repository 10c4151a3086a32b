import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startNatsServer, type NatsServer } from '@sagaflow/test-nats';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { natsJetStreamTransport } from '../../src/outbox/nats-jetstream-transport.ts';
import { publishOutboxBatch } from '../../src/outbox/publish-outbox-batch.ts';
import { TestClock } from '../../src/testing/test-clock.ts';
import { openTestDatabase } from '../support/test-database.ts';
import { clearOutbox, outboxRow, seedOutbox } from './seed-outbox.ts';

const logger = pino({ level: 'silent' });

/** Every message of `stream`, in stream order, as (subject, Nats-Msg-Id, body). */
async function readStream(jsm: JetStreamManager, stream: string) {
  const info = await jsm.streams.info(stream);
  const out: { subject: string; msgId: string | undefined; body: { messageId: string; sourceId: string } }[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const m = await jsm.streams.getMessage(stream, { seq });
    if (m === null) continue;
    out.push({ subject: m.subject, msgId: m.header.get('Nats-Msg-Id'), body: m.json() });
  }
  return out;
}

describe('NATS JetStream transport against a real nats-server', () => {
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
    await jsm.streams.add({ name: 'SAGAFLOW', subjects: ['sagaflow.>'] });
    clock = new TestClock(new Date(Date.now() + 1000));
  });
  const pass = () =>
    publishOutboxBatch({
      db,
      routes: { shipping: natsJetStreamTransport({ connection: nc }) },
      clock,
      logger,
      config: { batch_size: 4, backoff: { base_delay_ms: 1000, max_delay_ms: 1000 } },
    });

  it('messages reach the stream with Nats-Msg-Id = message id, each source in write order', async () => {
    const a = await seedOutbox(
      db,
      Array.from({ length: 5 }, () => ({ sourceId: 'order-A', destination: 'shipping' })),
    );
    const b = await seedOutbox(
      db,
      Array.from({ length: 5 }, () => ({ sourceId: 'order-B', destination: 'shipping' })),
    );
    let published = 0;
    for (let i = 0; i < 10 && published < 10; i++) published += (await pass()).published;
    expect(published).toBe(10);

    const stored = await readStream(jsm, 'SAGAFLOW');
    expect(stored).toHaveLength(10);
    for (const m of stored) {
      expect(m.subject).toBe('sagaflow.shipping');
      expect(m.msgId).toBe(m.body.messageId);
    }
    expect(stored.filter((m) => m.body.sourceId === 'order-A').map((m) => m.msgId)).toEqual(a);
    expect(stored.filter((m) => m.body.sourceId === 'order-B').map((m) => m.msgId)).toEqual(b);
    expect(await db.prisma.outboxMessage.count({ where: { status: 'Published' } })).toBe(10);
  });

  it('a message id published again inside the duplicate window is dropped by the stream', async () => {
    const [id] = await seedOutbox(db, [{ destination: 'shipping' }]);
    expect(await pass()).toMatchObject({ published: 1 });
    // As if the publisher had crashed before marking: the row is still Pending when its claim lapses.
    await db.prisma.outboxMessage.update({ where: { message_id: id }, data: { status: 'Pending' } });
    clock.advance(31_000);
    expect(await pass()).toMatchObject({ claimed: 1, published: 1 });

    const stored = await readStream(jsm, 'SAGAFLOW');
    expect(stored.map((m) => m.msgId)).toEqual([id]);
    expect(await outboxRow(db, id!)).toMatchObject({ status: 'Published', attempts: 2 });
  });

  it('a subject no stream captures fails the attempt (no PubAck) and is retried', async () => {
    await jsm.streams.delete('SAGAFLOW');
    const [id] = await seedOutbox(db, [{ destination: 'shipping' }]);
    expect(await pass()).toMatchObject({ claimed: 1, retried: 1 });
    const row = await outboxRow(db, id!);
    expect(row).toMatchObject({ status: 'Pending', attempts: 1 });
    expect(row.last_error).toContain(`JetStream publish of ${id} to sagaflow.shipping failed`);

    await jsm.streams.add({ name: 'SAGAFLOW', subjects: ['sagaflow.>'] });
    clock.advance(1000);
    expect(await pass()).toMatchObject({ published: 1 });
    expect((await readStream(jsm, 'SAGAFLOW')).map((m) => m.msgId)).toEqual([id]);
  });
});
