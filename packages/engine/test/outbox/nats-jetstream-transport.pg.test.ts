import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { natsJetStreamTransport } from '../../src/outbox/nats-jetstream-transport.ts';
import { publishOutboxBatch } from '../../src/outbox/publish-outbox-batch.ts';
import { readStream, useNatsOutbox } from './nats-outbox-suite.ts';
import { outboxRow, seedOutbox } from './seed-outbox.ts';

const logger = pino({ level: 'silent' });

describe('NATS JetStream transport against a real nats-server', () => {
  const s = useNatsOutbox();
  const pass = () =>
    publishOutboxBatch({
      db: s.db,
      routes: { shipping: natsJetStreamTransport({ connection: s.nc }) },
      clock: s.clock,
      logger,
      config: { batch_size: 4, backoff: { base_delay_ms: 1000, max_delay_ms: 1000 } },
    });

  it('messages reach the stream with Nats-Msg-Id = message id, each source in write order', async () => {
    const a = await seedOutbox(
      s.db,
      Array.from({ length: 5 }, () => ({ sourceId: 'order-A', destination: 'shipping' })),
    );
    const b = await seedOutbox(
      s.db,
      Array.from({ length: 5 }, () => ({ sourceId: 'order-B', destination: 'shipping' })),
    );
    let published = 0;
    for (let i = 0; i < 10 && published < 10; i++) published += (await pass()).published;
    expect(published).toBe(10);

    const stored = await readStream(s.jsm, 'SAGAFLOW');
    expect(stored).toHaveLength(10);
    for (const m of stored) {
      expect(m.subject).toBe('sagaflow.shipping');
      expect(m.msgId).toBe(m.body.messageId);
    }
    expect(stored.filter((m) => m.body.sourceId === 'order-A').map((m) => m.msgId)).toEqual(a);
    expect(stored.filter((m) => m.body.sourceId === 'order-B').map((m) => m.msgId)).toEqual(b);
    expect(await s.db.prisma.outboxMessage.count({ where: { status: 'Published' } })).toBe(10);
  });

  it('a message id published again inside the duplicate window is dropped by the stream', async () => {
    const [id] = await seedOutbox(s.db, [{ destination: 'shipping' }]);
    expect(await pass()).toMatchObject({ published: 1 });
    // As if the publisher had crashed before marking: the row is still Pending when its claim lapses.
    await s.db.prisma.outboxMessage.update({ where: { message_id: id }, data: { status: 'Pending' } });
    s.clock.advance(31_000);
    expect(await pass()).toMatchObject({ claimed: 1, published: 1 });

    const stored = await readStream(s.jsm, 'SAGAFLOW');
    expect(stored.map((m) => m.msgId)).toEqual([id]);
    expect(await outboxRow(s.db, id!)).toMatchObject({ status: 'Published', attempts: 2 });
  });

  it('a subject no stream captures fails the attempt (no PubAck) and is retried', async () => {
    await s.jsm.streams.delete('SAGAFLOW');
    const [id] = await seedOutbox(s.db, [{ destination: 'shipping' }]);
    expect(await pass()).toMatchObject({ claimed: 1, retried: 1 });
    const row = await outboxRow(s.db, id!);
    expect(row).toMatchObject({ status: 'Pending', attempts: 1 });
    expect(row.last_error).toContain(`JetStream publish of ${id} to sagaflow.shipping failed`);

    await s.jsm.streams.add({ name: 'SAGAFLOW', subjects: ['sagaflow.>'] });
    s.clock.advance(1000);
    expect(await pass()).toMatchObject({ published: 1 });
    expect((await readStream(s.jsm, 'SAGAFLOW')).map((m) => m.msgId)).toEqual([id]);
  });
});
