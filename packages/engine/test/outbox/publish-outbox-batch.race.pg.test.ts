import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/create-database.ts';
import type { Database } from '../../src/db/database.ts';
import { inProcessTransport } from '../../src/outbox/in-process-transport.ts';
import type { OutboxEnvelope } from '../../src/outbox/outbox-envelope.ts';
import { publishOutboxBatch, type OutboxBatchResult } from '../../src/outbox/publish-outbox-batch.ts';
import { claimOutboxBatch } from '../../src/store/claim-outbox-batch.ts';
import { TestClock } from '../../src/testing/test-clock.ts';
import { openTestDatabase } from '../support/test-database.ts';
import { clearOutbox, outboxRow, seedOutbox } from './seed-outbox.ts';

const logger = pino({ level: 'silent' });

/**
 * Each publisher passes in a loop of its own, as separate processes would, until `done()` (at most 400
 * passes each); `idle` runs after a pass that claimed nothing. Not rounds where every publisher waits
 * for the slowest: a claim skips the sources a rival is claiming at that moment, so passes started
 * together left all but one publisher empty-handed, and a publisher held in its pass
 * ({@link passesOverlap}) would hold up every other.
 */
async function drain(
  passes: (() => Promise<OutboxBatchResult>)[],
  done: () => boolean,
  idle: () => void = () => undefined,
): Promise<void> {
  await Promise.all(
    passes.map(async (pass) => {
      for (let n = 0; n < 400 && !done(); n++) {
        if ((await pass()).claimed > 0) continue;
        idle();
        await sleep(1);
      }
    }),
  );
}

/**
 * What each publisher's transport awaits first, so that concurrent passes overlap for certain, not
 * only when the machine lets them: the first delivery waits (at most 5 s) until another publisher
 * delivers too. In CI on a loaded machine one publisher took every batch, and the checks that more
 * than one publisher did the work failed while every delivery guarantee held.
 */
function passesOverlap(): (publisher: number) => Promise<void> {
  const delivering = new Set<number>();
  let secondIn!: () => void;
  const second = new Promise<void>((resolve) => (secondIn = resolve));
  let held = false;
  return async (publisher) => {
    delivering.add(publisher);
    if (delivering.size > 1) secondIn();
    if (held) return;
    held = true;
    await Promise.race([second, sleep(5_000)]);
  };
}

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
          claimOutboxBatch(replicas[i % replicas.length]!.prisma, {
            now,
            limit: 10,
            visibilityTimeoutSeconds: 30,
            timeoutMs: 10_000,
          }),
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
    const overlap = passesOverlap();
    const publishers = replicas.map((replica, publisher) => {
      const transport = inProcessTransport(async (message) => {
        await overlap(publisher);
        await sleep(2); // a real handoff takes time
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

    await drain(publishers, () => deliveries.length >= 72);

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
    const overlap = passesOverlap();
    const publishers = replicas.map((replica, publisher) => {
      const transport = inProcessTransport(async (message) => {
        await overlap(publisher);
        await sleep(2); // a real handoff takes time
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
            visibility_timeout_seconds: 3600, // beyond all the idle passes' advances
            backoff: { base_delay_ms: 1000, max_delay_ms: 1000 },
          },
        });
    });

    await drain(
      publishers,
      () => failing.size === 0 && deliveries.length >= 48,
      () => clock.advance(1000), // the failed rows' backoff; 1,600 s at most, never a claim window
    );

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

  // ADR 0036: the claim finds the oldest due heads at the front of the Pending rows by seq and walks
  // every source only when that front holds too few. Both paths, across batch boundaries and two
  // publishers, keep the guarantees: every message once, each source in write order, and a source in
  // backoff at the front never starves the sources behind it.
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
    const overlap = passesOverlap();
    const publishers = replicas.slice(0, 2).map((replica, publisher) => {
      const inventory = inProcessTransport(async (message) => {
        await overlap(publisher);
        await sleep(1); // a real handoff takes time
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
            visibility_timeout_seconds: 3600, // beyond all the idle passes' advances
            backoff: { base_delay_ms: 600_000, max_delay_ms: 600_000 },
          },
        });
    });

    await drain(
      publishers,
      () => deliveries.length >= 120,
      () => clock.advance(100), // 80 s at most: never past the failing head's backoff nor a claim window
    );

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
