import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { inProcessTransport } from '../../../src/outbox/in-process-transport.ts';
import { outboxLag } from '../../../src/outbox/outbox-lag.ts';
import { publishOutboxBatch } from '../../../src/outbox/publish-outbox-batch.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { clearOutbox, seedOutbox } from '../../outbox/seed-outbox.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';

const logger = pino({ level: 'silent' });

describe(`review 32: outbox lag at its edges (${testDbKind()}) (held)`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });
  beforeEach(async () => {
    await clearOutbox(db);
  });

  it('an empty outbox: nothing pending, age 0, nothing dead', async () => {
    expect(await outboxLag(db)).toEqual({ pending: 0, oldestPendingAgeSeconds: 0, dead: 0 });
  });

  it('a row written by a host whose clock runs ahead: age 0, never negative', async () => {
    await seedOutbox(db, [{ createdAt: new Date(Date.now() + 3_600_000) }]);
    expect(await outboxLag(db)).toEqual({ pending: 1, oldestPendingAgeSeconds: 0, dead: 0 });
  });

  it('a row held in its backoff and a claimed row still count as pending, aged from their creation; Published rows do not', async () => {
    const written = new Date(Date.now() - 120_000);
    await seedOutbox(db, [
      { sourceId: 'fails', createdAt: written },
      { sourceId: 'ok', createdAt: new Date(Date.now() - 60_000) },
    ]);
    const clock = new TestClock(new Date());
    await publishOutboxBatch({
      db,
      clock,
      logger,
      routes: {
        inventory: inProcessTransport((m) => {
          if (m.sourceId === 'fails') throw new Error('down');
        }),
      },
    });
    const lag = await outboxLag(db, { clock });
    expect(lag.pending).toBe(1);
    expect(lag.dead).toBe(0);
    expect(lag.oldestPendingAgeSeconds).toBeCloseTo((clock.now().getTime() - written.getTime()) / 1000, 0);
  });
});
