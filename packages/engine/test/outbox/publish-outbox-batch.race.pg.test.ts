import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/create-database.ts';
import type { Database } from '../../src/db/database.ts';
import { inProcessTransport } from '../../src/outbox/in-process-transport.ts';
import type { OutboxEnvelope } from '../../src/outbox/outbox-envelope.ts';
import { publishOutboxBatch } from '../../src/outbox/publish-outbox-batch.ts';
import { claimOutboxBatch } from '../../src/store/claim-outbox-batch.ts';
import { TestClock } from '../../src/testing/test-clock.ts';
import { openTestDatabase } from '../support/test-database.ts';
import { clearOutbox, seedOutbox } from './seed-outbox.ts';

const logger = pino({ level: 'silent' });

describe('concurrent outbox publishers on real PostgreSQL connections', () => {
  let db: Database & { url?: string };
  const replicas: Database[] = [];
  beforeAll(async () => {
    db = await openTestDatabase();
    for (let i = 0; i < 4; i++) replicas.push(await createDatabase({ kind: 'postgres', url: db.url!, poolSize: 4 }));
  });
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.close()));
    await db.close();
  });
  beforeEach(async () => {
    await clearOutbox(db);
  });

  it('eight claims racing on eight connections never take the same row (20 rounds)', async () => {
    for (let round = 0; round < 20; round++) {
      await clearOutbox(db);
      // 30 sources of 2 rows: enough for every claimer to find work.
      for (let s = 0; s < 30; s++) await seedOutbox(db, [{ sourceId: `s${s}` }, { sourceId: `s${s}` }]);
      const now = new Date(Date.now() + 1000);
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          replicas[i % replicas.length]!.prisma.$transaction((tx) =>
            claimOutboxBatch(tx, { now, limit: 10, visibilityTimeoutSeconds: 30 }),
          ),
        ),
      );
      const ids = claims.flat().map((r) => r.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBeGreaterThan(0);
      // A claimed row carries the attempt its claim counted, and nobody else's.
      expect(claims.flat().every((r) => r.attempts === 1)).toBe(true);
    }
  });

  it('four publishers draining one outbox deliver every message exactly once, each source in write order', async () => {
    const written: string[][] = [];
    for (let s = 0; s < 12; s++) {
      written.push(
        await seedOutbox(
          db,
          Array.from({ length: 6 }, () => ({ sourceId: `src-${s}` })),
        ),
      );
    }
    const deliveries: { publisher: number; message: OutboxEnvelope }[] = [];
    const publishers = replicas.map((replica, publisher) => {
      const transport = inProcessTransport(async (message) => {
        await sleep(2); // a real handoff takes time: lets the passes overlap
        deliveries.push({ publisher, message });
      });
      return () =>
        publishOutboxBatch({
          db: replica,
          routes: { inventory: transport },
          logger,
          config: { batch_size: 5, visibility_timeout_seconds: 60 },
        });
    });

    for (let round = 0; round < 200; round++) {
      const results = await Promise.all(publishers.map((pass) => pass()));
      if (results.every((r) => r.claimed === 0)) break;
    }

    const ids = deliveries.map((d) => d.message.messageId);
    expect(ids).toHaveLength(72);
    expect(new Set(ids).size).toBe(72);
    for (const [s, rows] of written.entries()) {
      expect(deliveries.filter((d) => d.message.sourceId === `src-${s}`).map((d) => d.message.messageId)).toEqual(rows);
    }
    expect(await db.prisma.outboxMessage.count({ where: { status: 'Published', attempts: 1 } })).toBe(72);
    // More than one publisher did the work (otherwise this would prove nothing about concurrency).
    expect(new Set(deliveries.map((d) => d.publisher)).size).toBeGreaterThan(1);
  });

  it('four publishers, batches where one row fails once: the rest of each batch is published, nothing lost or sent twice', async () => {
    const written: string[][] = [];
    for (let s = 0; s < 12; s++) {
      written.push(
        await seedOutbox(
          db,
          Array.from({ length: 4 }, () => ({ sourceId: `src-${s}` })),
        ),
      );
    }
    const failing = new Set(written.map((rows, s) => rows[s % rows.length]!));
    const clock = new TestClock(new Date(Date.now() + 1000));
    const deliveries: { publisher: number; message: OutboxEnvelope }[] = [];
    const publishers = replicas.map((replica, publisher) => {
      const transport = inProcessTransport(async (message) => {
        await sleep(2); // lets the passes overlap
        if (failing.delete(message.messageId)) throw new Error('refused once');
        deliveries.push({ publisher, message });
      });
      return () =>
        publishOutboxBatch({
          db: replica,
          routes: { inventory: transport },
          clock,
          logger,
          config: {
            batch_size: 6,
            visibility_timeout_seconds: 60,
            backoff: { base_delay_ms: 1000, max_delay_ms: 1000 },
          },
        });
    });

    for (let round = 0; round < 200; round++) {
      const results = await Promise.all(publishers.map((pass) => pass()));
      if (results.every((r) => r.claimed === 0) && failing.size === 0) break;
      clock.advance(1000); // the failed rows' backoff, never a claim window
    }

    expect(failing.size).toBe(0);
    const ids = deliveries.map((d) => d.message.messageId);
    expect(ids).toHaveLength(48);
    expect(new Set(ids).size).toBe(48);
    for (const [s, rows] of written.entries()) {
      expect(deliveries.filter((d) => d.message.sourceId === `src-${s}`).map((d) => d.message.messageId)).toEqual(rows);
    }
    expect(await db.prisma.outboxMessage.count({ where: { status: 'Published' } })).toBe(48);
    expect(await db.prisma.outboxMessage.count({ where: { status: 'Published', attempts: 2 } })).toBe(12);
    expect(new Set(deliveries.map((d) => d.publisher)).size).toBeGreaterThan(1);
  });
});
