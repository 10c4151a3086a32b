import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOutboxPublisher, webhookTransport, type Database } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { orderBySource, outOfOrder, seedMany, startSink, untilDone } from './support/relay-harness.ts';

const MAX_ATTEMPTS = 4;
const BASE_MS = 300;

/**
 * Review 48, attack 3: a poison row (its webhook answers 500 for ever) with a real publisher loop and a real
 * HTTP sink. ADR 0009: it is tried `max_attempts` times, retry n after at least base * 2^(n-1), then Dead
 * with its last error; until then it holds back only its own instance, whose later rows go, in order, once it
 * is Dead.
 */
describe('review 48: a poison outbox row dies alone (real PostgreSQL, real HTTP)', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db?.close();
  });

  it('is tried max_attempts times with its backoff, then Dead, and its instance goes on in order after it', async () => {
    await seedMany(db, { sources: 50, perSource: 5, prefix: 'p48' });
    const poisonId = 'p48-1-3';
    const sink = await startSink(db, (id) => id === poisonId);
    const { bySource, sourceOf } = await orderBySource(db);
    const publisher = startOutboxPublisher({
      db,
      routes: { sink: webhookTransport({ url: sink.url, secret: 's', timeoutMs: 5000 }) },
      config: {
        batch_size: 20,
        poll_interval_ms: 20,
        max_attempts: MAX_ATTEMPTS,
        backoff: { base_delay_ms: BASE_MS, max_delay_ms: 10_000 },
      },
      logger: pino({ level: 'silent' }),
    });
    try {
      const ok = await untilDone({
        done: async () =>
          (await db.prisma.outboxMessage.count({ where: { status: 'Published' } })) === 249 &&
          (await db.prisma.outboxMessage.count({ where: { status: 'Dead' } })) === 1,
        moved: () => sink.deliveries.length,
        stallMs: 30_000,
      });
      expect(ok).toBe(true);
    } finally {
      await publisher.stop();
      await sink.close();
    }
    const tries = sink.deliveries.filter((d) => d.messageId === poisonId).map((d) => d.at);
    expect(tries).toHaveLength(MAX_ATTEMPTS);
    for (let n = 1; n < tries.length; n++)
      expect(tries[n]! - tries[n - 1]!).toBeGreaterThanOrEqual(BASE_MS * 2 ** (n - 1));
    const dead = await db.prisma.outboxMessage.findUniqueOrThrow({ where: { message_id: poisonId } });
    expect(dead).toMatchObject({ status: 'Dead', attempts: MAX_ATTEMPTS, published_at: null });
    expect(dead.last_error).toContain('answered 500');
    // Its instance: rows 1-2 before it, 4-5 only after its last attempt; every instance in its order.
    const after = sink.deliveries.filter((d) => d.messageId === 'p48-1-4' || d.messageId === 'p48-1-5');
    expect(after.map((d) => d.messageId)).toEqual(['p48-1-4', 'p48-1-5']);
    expect(after[0]!.at).toBeGreaterThanOrEqual(tries.at(-1)!);
    const firstBefore = sink.deliveries.filter((d) => d.messageId === 'p48-1-1' || d.messageId === 'p48-1-2');
    expect(firstBefore.every((d) => d.at <= tries[0]!)).toBe(true);
    const order = bySource;
    const deliveredOnce = sink.deliveries.filter((d) => d.messageId !== poisonId);
    const withoutPoison = new Map([...order].map(([s, ids]) => [s, ids.filter((id) => id !== poisonId)]));
    expect(outOfOrder(deliveredOnce, withoutPoison, sourceOf)).toEqual([]);
    // The other 49 instances: each row delivered exactly once (no retries caused by the poison).
    const others = deliveredOnce.filter((d) => sourceOf.get(d.messageId) !== 'p48-src-1');
    expect(others).toHaveLength(245);
    expect(new Set(others.map((d) => d.messageId)).size).toBe(245);
  });
});
