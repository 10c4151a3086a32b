import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startNatsServer, type NatsServer } from '@sagaflow/test-nats';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/create-database.ts';
import type { Database } from '../../src/db/database.ts';
import { consumeOnce } from '../../src/outbox/consume-once.ts';
import { natsJetStreamTransport } from '../../src/outbox/nats-jetstream-transport.ts';
import type { OutboxEnvelope } from '../../src/outbox/outbox-envelope.ts';
import type { OutboxTransport } from '../../src/outbox/outbox-transport.ts';
import { publishOutboxBatch } from '../../src/outbox/publish-outbox-batch.ts';
import { TestClock } from '../../src/testing/test-clock.ts';
import { openTestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';
import { clearOutbox, outboxRow, seedOutbox } from './seed-outbox.ts';

const logger = pino({ level: 'silent' });

/**
 * Seed 004: "Simulate successful publish followed by lost acknowledgement, run the publisher again,
 * and prove that the consumer treats the duplicate as a no-op." The consumer's effect is a row in a
 * table of its own, written through consumeOnce; the proof is read back from the database.
 */
describe('a lost acknowledgement makes a duplicate that the consumer’s inbox turns into a no-op', () => {
  let db: Database & { url?: string };
  let rival: Database;
  let clock: TestClock;
  beforeAll(async () => {
    db = await openTestDatabase();
    rival = await createDatabase({ kind: 'postgres', url: db.url!, poolSize: 2 });
    await db.prisma.$executeRaw`create table public.stock_reservations (id serial primary key, order_id text not null)`;
  });
  afterAll(async () => {
    await rival?.close();
    await db?.close();
  });
  beforeEach(async () => {
    await clearOutbox(db);
    await db.prisma.$executeRaw`delete from public.stock_reservations`;
    clock = new TestClock(new Date(Date.now() + 1000));
  });

  /** The consumer: reserve stock for the order, once per message id. */
  const reserveStock = (message: OutboxEnvelope) =>
    consumeOnce(
      db,
      'inventory',
      message.messageId,
      async (tx) => {
        const { orderId } = message.payload as { orderId: string };
        await tx.$executeRaw`insert into public.stock_reservations (order_id) values (${orderId})`;
      },
      { messageType: message.type },
    );

  const reservations = async () =>
    (await db.prisma.$queryRaw<{ order_id: string }[]>`select order_id from public.stock_reservations`).map(
      (r) => r.order_id,
    );
  const inboxRows = () => db.prisma.inboxMessage.findMany({ where: { consumer: 'inventory' } });

  it('delivered, then the ack is lost: the publisher retries, the consumer skips it, the effect happens once', async () => {
    const [id] = await seedOutbox(db, [{ payload: { orderId: 'o-7' } }]);
    const outcomes: boolean[] = [];
    let ackLost = false;
    const lossy: OutboxTransport = {
      kind: 'in-process, ack lost once',
      async publish(message) {
        outcomes.push((await reserveStock(message)).consumed);
        if (!ackLost) {
          ackLost = true;
          throw new Error('connection reset before the acknowledgement arrived');
        }
      },
    };
    const pass = () =>
      publishOutboxBatch({
        db,
        routes: { inventory: lossy },
        clock,
        logger,
        config: { backoff: { base_delay_ms: 1000, max_delay_ms: 1000 } },
      });

    expect(await pass()).toMatchObject({ claimed: 1, retried: 1, published: 0 });
    expect(await outboxRow(db, id!)).toMatchObject({
      status: 'Pending',
      attempts: 1,
      last_error: 'connection reset before the acknowledgement arrived',
    });
    clock.advance(1000);
    expect(await pass()).toMatchObject({ claimed: 1, published: 1 });

    expect(outcomes).toEqual([true, false]);
    expect(await reservations()).toEqual(['o-7']);
    expect((await inboxRows()).map((r) => [r.message_id, r.message_type])).toEqual([[id, 'ReserveInventory']]);
    expect(await outboxRow(db, id!)).toMatchObject({ status: 'Published', attempts: 2 });
  });

  it('the publisher dies between delivery and marking: another replica re-publishes after the claim window; once', async () => {
    const [id] = await seedOutbox(db, [{ payload: { orderId: 'o-8' } }]);
    const outcomes: boolean[] = [];
    let releaseStuck = () => {};
    const stuck = new Promise<void>((resolve) => (releaseStuck = resolve));
    const dying: OutboxTransport = {
      kind: 'delivers, then hangs like a dead process',
      async publish(message) {
        outcomes.push((await reserveStock(message)).consumed);
        await stuck;
      },
    };
    const healthy: OutboxTransport = {
      kind: 'in-process',
      async publish(message) {
        outcomes.push((await reserveStock(message)).consumed);
      },
    };
    const config = { visibility_timeout_seconds: 30 };

    const firstPass = publishOutboxBatch({ db, routes: { inventory: dying }, clock, logger, config });
    await waitFor('the first delivery', async () => (outcomes.length === 1 ? true : undefined));
    // Inside the claim window the rival finds nothing to do...
    expect(
      (await publishOutboxBatch({ db: rival, routes: { inventory: healthy }, clock, logger, config })).claimed,
    ).toBe(0);
    // ...once it lapsed, the row is claimed and published again.
    clock.advance(30_000);
    expect(
      await publishOutboxBatch({ db: rival, routes: { inventory: healthy }, clock, logger, config }),
    ).toMatchObject({
      claimed: 1,
      published: 1,
    });
    // The first publisher comes back to life: its late mark changes nothing.
    releaseStuck();
    expect(await firstPass).toMatchObject({ claimed: 1, published: 0, lost: 1 });

    expect(outcomes).toEqual([true, false]);
    expect(await reservations()).toEqual(['o-8']);
    expect(await inboxRows()).toHaveLength(1);
    expect(await outboxRow(db, id!)).toMatchObject({ status: 'Published', attempts: 2 });
  });

  describe('through NATS JetStream, after the duplicate window', () => {
    let server: NatsServer;
    let nc: NatsConnection;
    let jsm: JetStreamManager;
    beforeAll(async () => {
      server = await startNatsServer();
      nc = await connect({ servers: server.url });
      jsm = await jetstreamManager(nc);
      // A 1 s duplicate window, so the retry below lands outside it: the stream keeps both copies.
      await jsm.streams.add({ name: 'ORDERS', subjects: ['sagaflow.>'], duplicate_window: 1_000_000_000 });
    });
    afterAll(async () => {
      await nc?.close();
      await server?.stop();
    });

    it('the stream holds the message twice; the consumer applies it once', async () => {
      const [id] = await seedOutbox(db, [{ destination: 'inventory', payload: { orderId: 'o-9' } }]);
      const nats = natsJetStreamTransport({ connection: nc });
      let ackLost = false;
      const lossy: OutboxTransport = {
        kind: 'nats, PubAck lost once',
        async publish(message) {
          await nats.publish(message);
          if (!ackLost) {
            ackLost = true;
            throw new Error('PubAck lost');
          }
        },
      };
      const pass = () =>
        publishOutboxBatch({
          db,
          routes: { inventory: lossy },
          clock,
          logger,
          config: { backoff: { base_delay_ms: 1000, max_delay_ms: 1000 } },
        });

      expect(await pass()).toMatchObject({ retried: 1 });
      await sleep(1200);
      clock.advance(1000);
      expect(await pass()).toMatchObject({ published: 1 });

      const info = await jsm.streams.info('ORDERS');
      expect(info.state.messages).toBe(2);
      const outcomes: boolean[] = [];
      for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
        const stored = await jsm.streams.getMessage('ORDERS', { seq });
        expect(stored?.header.get('Nats-Msg-Id')).toBe(id);
        const body = stored!.json<{ messageId: string; type: string; payload: { orderId: string } }>();
        const result = await consumeOnce(db, 'inventory', body.messageId, async (tx) => {
          await tx.$executeRaw`insert into public.stock_reservations (order_id) values (${body.payload.orderId})`;
        });
        outcomes.push(result.consumed);
      }

      expect(outcomes).toEqual([true, false]);
      expect(await reservations()).toEqual(['o-9']);
      expect(await inboxRows()).toHaveLength(1);
      expect(await outboxRow(db, id!)).toMatchObject({ status: 'Published', attempts: 2 });
    });
  });
});
