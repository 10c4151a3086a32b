import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { inProcessTransport } from '../../../src/outbox/in-process-transport.ts';
import { startOutboxPublisher } from '../../../src/outbox/start-outbox-publisher.ts';
import { clearOutbox, outboxRow, seedOutbox } from '../../outbox/seed-outbox.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

const logger = pino({ level: 'silent' });

/**
 * ADR 0009: "Different sources publish concurrently"; a poison or stuck message "blocks its own
 * source"; "Other sources are unaffected". One in-process handler that never returns (the ADR notes
 * that transport has no timeout of its own) must cost its own source only.
 */
describe(`review 32: one source's hung delivery and the other sources (${testDbKind()})`, () => {
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

  it('while source a’s handler hangs, source b’s delivered row is marked Published and a row written later for source c goes out', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let hungEntered = false;
    const delivered: string[] = [];
    const routes = {
      slow: inProcessTransport(async () => {
        hungEntered = true;
        await gate;
      }),
      inventory: inProcessTransport((m) => {
        delivered.push(m.sourceId);
      }),
    };
    await seedOutbox(db, [{ sourceId: 'a', destination: 'slow' }]);
    const [b] = await seedOutbox(db, [{ sourceId: 'b' }]);
    const publisher = startOutboxPublisher({
      db,
      routes,
      logger,
      config: { poll_interval_ms: 10, visibility_timeout_seconds: 60 },
    });
    try {
      await waitFor('a hung and b delivered', async () => (hungEntered && delivered.includes('b') ? true : undefined));
      const [c] = await seedOutbox(db, [{ sourceId: 'c' }]);

      const seen = await waitFor(
        'b and c Published',
        async () => {
          const rowB = await outboxRow(db, b!);
          const rowC = await outboxRow(db, c!);
          return rowB.status === 'Published' && rowC.status === 'Published' ? true : undefined;
        },
        5000,
      ).catch(() => false);

      expect({
        published: seen,
        b: (await outboxRow(db, b!)).status,
        c: (await outboxRow(db, c!)).status,
        delivered,
      }).toEqual({ published: true, b: 'Published', c: 'Published', delivered: ['b', 'c'] });
    } finally {
      release();
      await publisher.stop();
    }
  });
});
