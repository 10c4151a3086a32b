import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { inProcessTransport } from '../../src/outbox/in-process-transport.ts';
import type { OutboxEnvelope } from '../../src/outbox/outbox-envelope.ts';
import { outboxLag } from '../../src/outbox/outbox-lag.ts';
import { publishOutboxBatch } from '../../src/outbox/publish-outbox-batch.ts';
import { startOutboxPublisher } from '../../src/outbox/start-outbox-publisher.ts';
import { TestClock } from '../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';
import { clearOutbox, outboxRow, seedOutbox } from './seed-outbox.ts';
import { pino } from 'pino';

const logger = pino({ level: 'silent' });

describe(`outbox publisher, one pass at a time (${testDbKind()})`, () => {
  let db: Database;
  let clock: TestClock;
  let delivered: OutboxEnvelope[];
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });
  beforeEach(async () => {
    await clearOutbox(db);
    clock = new TestClock(new Date(Date.now() + 1000));
    delivered = [];
  });

  const recording = inProcessTransport((m) => {
    delivered.push(m);
  });
  const pass = (routes = { inventory: recording }, config = {}) =>
    publishOutboxBatch({ db, routes, clock, logger, config });

  it('a due row is delivered once with its envelope and marked Published at the clock time', async () => {
    const [id] = await seedOutbox(db, [{ payload: { orderId: 'o-1' }, type: 'ReserveInventory' }]);

    expect(await pass()).toEqual({ claimed: 1, published: 1, retried: 0, dead: 0, released: 0, lost: 0 });

    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({
      messageId: id,
      type: 'ReserveInventory',
      payload: { orderId: 'o-1' },
      attempt: 1,
    });
    const row = await outboxRow(db, id!);
    expect(row).toMatchObject({ status: 'Published', attempts: 1, last_error: null });
    expect(row.published_at?.getTime()).toBe(clock.now().getTime());
    expect((await pass()).claimed).toBe(0);
    expect(delivered).toHaveLength(1);
  });

  it('a failed publish records last_error and is retried after exponential backoff, then Published', async () => {
    const [id] = await seedOutbox(db, [{}]);
    let failuresLeft = 2;
    const flaky = inProcessTransport(() => {
      if (failuresLeft-- > 0) throw new Error(`inventory service down (${failuresLeft})`);
    });
    const config = { backoff: { base_delay_ms: 1000, max_delay_ms: 60_000 } };
    const start = clock.now().getTime();

    expect(await pass({ inventory: flaky }, config)).toMatchObject({ claimed: 1, retried: 1, published: 0 });
    let row = await outboxRow(db, id!);
    expect(row).toMatchObject({ status: 'Pending', attempts: 1, last_error: 'inventory service down (1)' });
    expect(row.available_at.getTime()).toBe(start + 1000);

    clock.advance(999);
    expect((await pass({ inventory: flaky }, config)).claimed).toBe(0);
    clock.advance(1);
    expect(await pass({ inventory: flaky }, config)).toMatchObject({ claimed: 1, retried: 1 });
    row = await outboxRow(db, id!);
    expect(row).toMatchObject({ status: 'Pending', attempts: 2, last_error: 'inventory service down (0)' });
    expect(row.available_at.getTime()).toBe(start + 1000 + 2000);

    clock.advance(1999);
    expect((await pass({ inventory: flaky }, config)).claimed).toBe(0);
    clock.advance(1);
    expect(await pass({ inventory: flaky }, config)).toMatchObject({ claimed: 1, published: 1 });
    expect(await outboxRow(db, id!)).toMatchObject({ status: 'Published', attempts: 3 });
  });

  it('after max_attempts the row is Dead, keeps its last error, is never claimed again and is not deleted', async () => {
    const [id] = await seedOutbox(db, [{}]);
    const broken = inProcessTransport(() => {
      throw new Error('schema mismatch at the consumer');
    });
    const config = { max_attempts: 3, backoff: { base_delay_ms: 10, max_delay_ms: 10 } };
    const results = [];
    for (let i = 0; i < 5; i++) {
      results.push(await pass({ inventory: broken }, config));
      clock.advance(10);
    }
    expect(results.map((r) => [r.claimed, r.retried, r.dead])).toEqual([
      [1, 1, 0],
      [1, 1, 0],
      [1, 0, 1],
      [0, 0, 0],
      [0, 0, 0],
    ]);
    expect(await outboxRow(db, id!)).toMatchObject({
      status: 'Dead',
      attempts: 3,
      last_error: 'schema mismatch at the consumer',
      published_at: null,
    });
  });

  it('a destination with no route fails like any publish, naming the destination, and is retried', async () => {
    const [id] = await seedOutbox(db, [{ destination: 'warehouse' }]);
    expect(await pass()).toMatchObject({ claimed: 1, retried: 1 });
    expect(await outboxRow(db, id!)).toMatchObject({
      status: 'Pending',
      attempts: 1,
      last_error: 'no transport is configured for destination "warehouse"',
    });
  });

  it('a source’s rows go out in write order; a failure holds back the rows behind it while other sources proceed', async () => {
    // One transaction per source, as deliver() writes them: same created_at, order from seq.
    const [a1, a2, a3] = await seedOutbox(db, [{ sourceId: 'A' }, { sourceId: 'A' }, { sourceId: 'A' }]);
    const [b1, b2] = await seedOutbox(db, [{ sourceId: 'B' }, { sourceId: 'B' }]);
    let failA2 = true;
    const transport = inProcessTransport((m) => {
      if (m.messageId === a2 && failA2) {
        failA2 = false;
        throw new Error('a2 refused once');
      }
      delivered.push(m);
    });
    const config = { backoff: { base_delay_ms: 5000, max_delay_ms: 5000 } };

    expect(await pass({ inventory: transport }, config)).toMatchObject({
      claimed: 5,
      published: 3,
      retried: 1,
      released: 1,
    });
    expect(await outboxRow(db, a3!)).toMatchObject({ status: 'Pending', attempts: 0 });
    // a3 is due, but a2 (before it) waits for its backoff: a3 is not claimable yet.
    expect((await pass({ inventory: transport }, config)).claimed).toBe(0);
    clock.advance(5000);
    expect(await pass({ inventory: transport }, config)).toMatchObject({ claimed: 2, published: 2 });

    const order = (source: string) => delivered.filter((m) => m.sourceId === source).map((m) => m.messageId);
    expect(order('A')).toEqual([a1, a2, a3]);
    expect(order('B')).toEqual([b1, b2]);
    expect(await outboxRow(db, a3!)).toMatchObject({ status: 'Published', attempts: 1 });
  });

  it('a batch where one row fails: the others are marked Published by the same pass, only the failed one is retried', async () => {
    const written: string[] = [];
    for (let s = 0; s < 12; s++) written.push(...(await seedOutbox(db, [{ sourceId: `s${s}` }])));
    const failing = written[5]!;
    let failOnce = true;
    const transport = inProcessTransport((m) => {
      if (m.messageId === failing && failOnce) {
        failOnce = false;
        throw new Error('refused once');
      }
      delivered.push(m);
    });
    const config = { batch_size: 12, backoff: { base_delay_ms: 5000, max_delay_ms: 5000 } };

    expect(await pass({ inventory: transport }, config)).toEqual({
      claimed: 12,
      published: 11,
      retried: 1,
      dead: 0,
      released: 0,
      lost: 0,
    });
    for (const id of written.filter((id) => id !== failing)) {
      const row = await outboxRow(db, id);
      expect(row).toMatchObject({ status: 'Published', attempts: 1 });
      expect(row.published_at?.getTime()).toBe(clock.now().getTime());
    }
    expect(await outboxRow(db, failing)).toMatchObject({ status: 'Pending', attempts: 1, last_error: 'refused once' });
    expect((await pass({ inventory: transport }, config)).claimed).toBe(0);
    clock.advance(5000);
    expect(await pass({ inventory: transport }, config)).toMatchObject({ claimed: 1, published: 1 });

    expect(delivered.map((m) => m.messageId).sort()).toEqual([...written].sort());
    expect(await outboxRow(db, failing)).toMatchObject({ status: 'Published', attempts: 2 });
  });

  it('a claim takes at most batch_size rows, each source its share from the front of its rows', async () => {
    const a = await seedOutbox(
      db,
      Array.from({ length: 10 }, () => ({ sourceId: 'A' })),
    );
    const b = await seedOutbox(
      db,
      Array.from({ length: 10 }, () => ({ sourceId: 'B' })),
    );

    expect(await pass(undefined, { batch_size: 4 })).toMatchObject({ claimed: 4, published: 4 });
    const order = (source: string) => delivered.filter((m) => m.sourceId === source).map((m) => m.messageId);
    expect(order('A')).toEqual(a.slice(0, 2));
    expect(order('B')).toEqual(b.slice(0, 2));
    for (let i = 0; i < 10 && (await pass(undefined, { batch_size: 4 })).claimed > 0; i++);
    expect(order('A')).toEqual(a);
    expect(order('B')).toEqual(b);
  });

  it('a Dead row stops holding back its source', async () => {
    const [x1, x2] = await seedOutbox(db, [{ sourceId: 'X' }, { sourceId: 'X' }]);
    const transport = inProcessTransport((m) => {
      if (m.messageId === x1) throw new Error('poison');
      delivered.push(m);
    });
    await pass({ inventory: transport }, { max_attempts: 1 });
    expect(await outboxRow(db, x1!)).toMatchObject({ status: 'Dead' });
    expect(await pass({ inventory: transport }, { max_attempts: 1 })).toMatchObject({ claimed: 1, published: 1 });
    expect(delivered.map((m) => m.messageId)).toEqual([x2]);
  });

  it('lag: pending rows, the oldest one’s age on the clock, and dead rows', async () => {
    expect(await outboxLag(db, { clock })).toEqual({ pending: 0, oldestPendingAgeSeconds: 0, dead: 0 });
    const now = clock.now().getTime();
    await seedOutbox(db, [
      { sourceId: 'L1', createdAt: new Date(now - 90_000) },
      { sourceId: 'L2', createdAt: new Date(now - 30_000) },
      { sourceId: 'L3', destination: 'nowhere', createdAt: new Date(now - 10_000) },
      { sourceId: 'L4', createdAt: new Date(now - 5_000) },
    ]);
    expect(await outboxLag(db, { clock })).toEqual({ pending: 4, oldestPendingAgeSeconds: 90, dead: 0 });
    // L3 has no route: with one attempt allowed it goes Dead; the others are published.
    await pass(undefined, { max_attempts: 1 });
    expect(await outboxLag(db, { clock })).toEqual({ pending: 0, oldestPendingAgeSeconds: 0, dead: 1 });
  });

  it('the loop publishes rows written while it runs, and stops', async () => {
    const publisher = startOutboxPublisher({
      db,
      routes: { inventory: recording },
      logger,
      config: { poll_interval_ms: 20 },
    });
    try {
      await sleep(50);
      const [id] = await seedOutbox(db, [{}]);
      await waitFor('the row to be published', async () =>
        (await outboxRow(db, id!)).status === 'Published' ? true : undefined,
      );
      expect(delivered.map((m) => m.messageId)).toEqual([id]);
    } finally {
      await publisher.stop();
    }
  });
  it('a publish that never answers fails at publish_timeout_ms, and never later than its claim window (ADR 0103)', async () => {
    const never = inProcessTransport(() => new Promise<void>(() => undefined));
    const [short] = await seedOutbox(db, [{ sourceId: 'deadline-a' }]);
    expect(await pass({ inventory: never }, { publish_timeout_ms: 200 })).toMatchObject({ claimed: 1, retried: 1 });
    expect(await outboxRow(db, short!)).toMatchObject({ status: 'Pending', attempts: 1 });
    expect((await outboxRow(db, short!)).last_error).toBe('the in-process transport did not acknowledge within 200 ms');
    clock.advance(60_000);
    await clearOutbox(db);
    // A one-second claim window: the default 30 s deadline is cut to what is left of the window, with
    // time kept to record the failure before another publisher may claim the row.
    const [windowed] = await seedOutbox(db, [{ sourceId: 'deadline-b' }]);
    expect(await pass({ inventory: never }, { visibility_timeout_seconds: 1 })).toMatchObject({ retried: 1 });
    const ms = /within (\d+) ms$/.exec((await outboxRow(db, windowed!)).last_error ?? '')?.[1];
    expect(Number(ms)).toBeGreaterThan(0);
    expect(Number(ms)).toBeLessThanOrEqual(750);
  });
});
