import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import type { Database } from '../../src/db/database.ts';
import { inProcessTransport } from '../../src/outbox/in-process-transport.ts';
import { publishOutboxBatch } from '../../src/outbox/publish-outbox-batch.ts';
import { TestClock } from '../../src/testing/test-clock.ts';
import { openTestDatabase } from '../support/test-database.ts';
import { seedOutbox } from './seed-outbox.ts';

const deadIndexes = ['outbox_dead_destination_available_at_id_idx', 'outbox_dead_source_id_available_at_id_idx'];

async function indexBytes(db: Database, name: string): Promise<number> {
  const rows = await db.prisma.$queryRaw<{ n: number }[]>`
    select pg_relation_size(format('%I.%I', 'sagaflow', ${name}::text)::regclass)::int as n`;
  return rows[0]!.n;
}

/**
 * ADR 0122: the indexes on the Dead rows (migration 0032) are partial on `status = 'Dead'`, so the
 * publisher's writes of Pending and Published rows add no entry to them; a row's death does. Measured by
 * the indexes' size on disk, against a Pending-only index that does grow under the same writes.
 */
describe('the Dead-only outbox indexes under the publisher (PostgreSQL)', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('2,000 rows written and published add nothing to them; rows that die do', async () => {
    const before = await Promise.all(deadIndexes.map((n) => indexBytes(db, n)));
    const pendingBefore = await indexBytes(db, 'outbox_pending_source_id_seq_idx');
    for (let i = 0; i < 4; i++)
      await seedOutbox(
        db,
        Array.from({ length: 500 }, (_, n) => ({ sourceId: `source-${i}-${n % 50}`, destination: 'inventory' })),
      );
    const clock = new TestClock(new Date(Date.now() + 1000));
    const logger = pino({ level: 'silent' });
    const routes = { inventory: inProcessTransport(() => {}) };
    for (let i = 0; i < 100; i++) {
      const pass = await publishOutboxBatch({ db, routes, clock, logger, config: { batch_size: 200 } });
      if (pass.claimed === 0) break;
    }
    expect(await db.prisma.outboxMessage.count({ where: { status: { not: 'Published' } } })).toBe(0);
    expect(await indexBytes(db, 'outbox_pending_source_id_seq_idx')).toBeGreaterThan(pendingBefore);
    expect(await Promise.all(deadIndexes.map((n) => indexBytes(db, n)))).toEqual(before);

    // Rows with no route die (one attempt allowed): now the Dead indexes hold them.
    await seedOutbox(
      db,
      Array.from({ length: 500 }, (_, n) => ({ sourceId: `dying-${n}`, destination: 'nowhere' })),
    );
    clock.set(new Date(Date.now() + 1000)); // the rows are due on the business clock
    for (let i = 0; i < 20; i++) {
      const pass = await publishOutboxBatch({
        db,
        routes,
        clock,
        logger,
        config: { batch_size: 200, max_attempts: 1 },
      });
      if (pass.claimed === 0) break;
    }
    expect(await db.prisma.outboxMessage.count({ where: { status: 'Dead' } })).toBe(500);
    const after = await Promise.all(deadIndexes.map((n) => indexBytes(db, n)));
    after.forEach((bytes, i) => expect(bytes).toBeGreaterThan(before[i]!));
  });
});
