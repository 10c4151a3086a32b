import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import type { Database } from '../../../src/db/database.ts';
import { inProcessTransport } from '../../../src/outbox/in-process-transport.ts';
import { publishOutboxBatch } from '../../../src/outbox/publish-outbox-batch.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { clearOutbox, outboxRow, seedOutbox } from '../../outbox/seed-outbox.ts';

const logger = pino({ level: 'silent' });

/**
 * ADR 0009: "A poison message blocks its own source until it goes Dead (max_attempts), by design ...
 * Other sources are unaffected." The claim's first statement picks the `batch_size` sources with the
 * oldest DUE row; a source whose head row waits for its backoff but whose later rows were handed back
 * (due now, not clear) still takes one of those slots and then claims nothing. Enough such sources and
 * a healthy source is never claimed while their backoffs run.
 */
describe(`outbox: sources held back by their own failing head row (${testDbKind()})`, () => {
  let db: Database;
  let clock: TestClock;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });
  beforeEach(async () => {
    await clearOutbox(db);
    clock = new TestClock(new Date(Date.now() + 1000));
  });

  it('a healthy source is published while two failing sources wait for their backoff (batch_size 2)', async () => {
    // Two instances whose commands go to a destination that is down, then one healthy instance.
    await seedOutbox(db, [
      { sourceId: 'A', destination: 'billing' },
      { sourceId: 'A', destination: 'billing' },
    ]);
    await seedOutbox(db, [
      { sourceId: 'B', destination: 'billing' },
      { sourceId: 'B', destination: 'billing' },
    ]);
    const [c1] = await seedOutbox(db, [{ sourceId: 'C', destination: 'inventory' }]);
    const delivered: string[] = [];
    const routes = {
      billing: inProcessTransport(() => {
        throw new Error('billing is down');
      }),
      inventory: inProcessTransport((m) => {
        delivered.push(m.messageId);
      }),
    };
    const config = { batch_size: 2, backoff: { base_delay_ms: 60_000, max_delay_ms: 600_000 } };
    const pass = () => publishOutboxBatch({ db, routes, clock, logger, config });

    // Ten passes, one second apart: well inside the failing rows' one-minute backoff.
    for (let i = 0; i < 10; i++) {
      await pass();
      clock.advance(1000);
    }

    // Source C has nothing to do with billing: its only row must have gone out.
    expect(delivered).toEqual([c1]);
    expect(await outboxRow(db, c1!)).toMatchObject({ status: 'Published' });
  });
});
