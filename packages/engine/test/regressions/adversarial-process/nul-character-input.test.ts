import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { msg, newOrderId, processManagerOn, rowsOf } from '../../process/support/process-harness.ts';

/**
 * Issue 5, bad input: a message with a bad id or a payload that fails its schema is "rejected with a
 * clear error before any write". parseMessage accepts any non-blank string id and whatever zod
 * accepts, including U+0000, which PostgreSQL text and jsonb cannot hold (22021 / 22P05). Such a
 * message fails inside the transaction with a driver error on every delivery, and with quarantine on
 * its failure record (which stores the same id and payload) cannot be written either, so the
 * instance keeps failing on it past its budget and is never quarantined.
 */
describe(`a NUL character in a message id or payload (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('is refused as invalid_input before any write', async () => {
    const { pm } = processManagerOn(db, { config: { store_retry: { max_attempts: 1 } } });
    const order = newOrderId();
    await expect(pm.deliver('order-fulfilment', msg.paymentCaptured(order, 'evt\u00001'))).rejects.toMatchObject({
      code: 'invalid_input',
    });
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    await expect(pm.deliver('order-fulfilment', msg.note(order, 'tab\u0000bed'))).rejects.toMatchObject({
      code: 'invalid_input',
    });
  });

  it('with quarantine on, does not keep an instance failing past its budget without ever quarantining it', async () => {
    const clock = new TestClock(new Date('2026-03-01T10:00:00.000Z'));
    const { pm } = processManagerOn(db, {
      clock,
      config: { quarantine_after_seconds: 60, store_retry: { max_attempts: 1 } },
    });
    const order = newOrderId();
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    const bad = msg.note(order, 'tab\u0000bed');
    const outcomes: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await pm.deliver('order-fulfilment', bad).then(
        (x) => x.outcome,
        (e: unknown) => ((e as { code?: string }).code === 'invalid_input' ? 'refused' : 'threw'),
      );
      outcomes.push(r);
      clock.advance(61_000);
    }
    const rows = await rowsOf(db, order);
    // Either refused up front as bad input, or handled by seed 002's rules (recorded, then quarantined).
    const refusedEveryTime = outcomes.every((o) => o === 'refused');
    const quarantined = rows.instance?.status === 'QUARANTINED';
    expect({ outcomes, status: rows.instance?.status, refusedEveryTime, quarantined }).toMatchObject(
      refusedEveryTime ? { refusedEveryTime: true } : { quarantined: true },
    );
  });
});
