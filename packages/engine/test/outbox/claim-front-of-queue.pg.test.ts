import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/create-database.ts';
import type { Database } from '../../src/db/database.ts';
import { inProcessTransport } from '../../src/outbox/in-process-transport.ts';
import type { OutboxEnvelope } from '../../src/outbox/outbox-envelope.ts';
import { publishOutboxBatch } from '../../src/outbox/publish-outbox-batch.ts';
import { TestClock } from '../../src/testing/test-clock.ts';
import { openTestDatabase } from '../support/test-database.ts';
import { clearOutbox, outboxRow, seedOutbox } from './seed-outbox.ts';

const logger = pino({ level: 'silent' });

/**
 * ADR 0036: the claim finds the oldest due heads at the front of the Pending rows in `seq` order and
 * walks every source only when that front holds too few. Both paths, across batch boundaries and two
 * publishers on their own connections, must keep the outbox's guarantees: every message once, each
 * source in write order, and a source in backoff at the front never starves the sources behind it.
 */
describe('outbox claim: the front of the queue and the walk over every source', () => {
  let db: Database & { url?: string };
  const replicas: Database[] = [];
  beforeAll(async () => {
    db = await openTestDatabase();
    for (let i = 0; i < 2; i++) replicas.push(await createDatabase({ kind: 'postgres', url: db.url!, poolSize: 4 }));
  });
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.close()));
    await db.close();
  });
  beforeEach(async () => {
    await clearOutbox(db);
  });

  it('two publishers: a failing source filling the front, then 40 sources written round-robin; each healthy message once, in source order', async () => {
    // 30 rows of one source whose destination is down: more than the front a batch of 4 reads (16 rows).
    const blocked = await seedOutbox(
      db,
      Array.from({ length: 30 }, () => ({ sourceId: 'down', destination: 'billing' })),
    );
    // Then 40 sources, 3 rows each, written round-robin: their heads sit together at the front once `down` is behind.
    const written = new Map<string, string[]>();
    for (let round = 0; round < 3; round++) {
      for (let s = 0; s < 40; s++) {
        const [id] = await seedOutbox(db, [{ sourceId: `src-${s}` }]);
        written.set(`src-${s}`, [...(written.get(`src-${s}`) ?? []), id!]);
      }
    }
    const clock = new TestClock(new Date(Date.now() + 1000));
    const deliveries: { publisher: number; message: OutboxEnvelope }[] = [];
    const publishers = replicas.map((replica, publisher) => {
      const inventory = inProcessTransport(async (message) => {
        await sleep(1); // lets the two publishers' passes overlap
        deliveries.push({ publisher, message });
      });
      const billing = inProcessTransport(() => {
        throw new Error('billing is down');
      });
      return () =>
        publishOutboxBatch({
          db: replica,
          routes: { inventory, billing },
          clock,
          logger,
          config: {
            batch_size: 4,
            visibility_timeout_seconds: 60,
            backoff: { base_delay_ms: 600_000, max_delay_ms: 600_000 },
          },
        });
    });

    for (let round = 0; round < 200 && deliveries.length < 120; round++) {
      await Promise.all(publishers.map((pass) => pass()));
      clock.advance(100); // never past the failing head's backoff nor a claim window
    }

    const ids = deliveries.map((d) => d.message.messageId);
    expect(ids).toHaveLength(120);
    expect(new Set(ids).size).toBe(120);
    for (const [source, rows] of written) {
      expect(deliveries.filter((d) => d.message.sourceId === source).map((d) => d.message.messageId)).toEqual(rows);
    }
    expect(new Set(deliveries.map((d) => d.publisher)).size).toBe(2);
    // The failing source was tried once (its head) and holds the rest back: none of its rows went out.
    expect(await outboxRow(db, blocked[0]!)).toMatchObject({ status: 'Pending', attempts: 1 });
    expect(await db.prisma.outboxMessage.count({ where: { source_id: 'down', attempts: 0 } })).toBe(29);
    expect(await db.prisma.outboxMessage.count({ where: { status: 'Published' } })).toBe(120);
  });
});
