import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { orderFulfilment } from '../../process/support/order-fulfilment.ts';
import { msg, newOrderId, processManagerOn, rowsOf } from '../../process/support/process-harness.ts';

/**
 * Seed 002's list of failures that record nothing includes "a failing event the instance already
 * counts as handled". Here M was applied (it is in the inbox); its redelivery then fails on a store
 * read after the lock, before the inbox check answers. recordFailure never consults the inbox.
 */
describe(`a failing redelivery of a handled message records nothing (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('writes no failure record for a message already in the inbox', async () => {
    const clock = new TestClock(new Date('2026-03-01T10:00:00.000Z'));
    const config = { quarantine_after_seconds: 300, store_retry: { max_attempts: 1 } };
    const processes = [orderFulfilment()];
    const order = newOrderId();
    const m = msg.inventoryReserved(order);
    const healthy = processManagerOn(db, { processes, config, clock });
    const failing = processManagerOn(db, {
      processes,
      config,
      clock,
      faults: {
        afterLock: ({ messageId }) => {
          if (messageId === m.id) throw new Error('could not read the inbox');
        },
      },
    });
    await healthy.pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    expect(await healthy.pm.deliver('order-fulfilment', m)).toMatchObject({ outcome: 'applied' });
    await expect(failing.pm.deliver('order-fulfilment', m)).rejects.toThrow('could not read the inbox');

    const rows = await rowsOf(db, order);
    expect(rows.inbox.map((i) => i.message_id)).toContain(m.id);
    expect(rows.instance?.failure_redelivery_key).toBeNull();
    expect(rows.instance?.first_failed_at).toBeNull();
  });
});
