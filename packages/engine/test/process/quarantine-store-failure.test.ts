import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';
import { orderFulfilment } from './support/order-fulfilment.ts';
import { msg, newOrderId, processManagerOn, rowsOf } from './support/process-harness.ts';

/**
 * Seed 002: "a failure where the store read or the record write throws" records nothing, and "the
 * next failure tries the write again". (The other half of that rule, a record write that loses its
 * compare-and-set, cannot happen here: the record is written under the instance's row lock, with the
 * version read under it.)
 */
describe(`quarantine: the failure record's own store failing (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('records nothing and rethrows the message failure; the next failure writes the record as a first failure', async () => {
    const store = { down: true };
    const { pm, clock } = processManagerOn(db, {
      processes: [orderFulfilment()],
      config: { quarantine_after_seconds: 300 },
      faults: {
        beforeFailureRecord: () => {
          if (store.down) throw new Error('connection terminated while writing the failure record');
        },
      },
    });
    const order = newOrderId();
    await pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    const poison = msg.note(order, 'poison pill');
    await expect(pm.deliver('order-fulfilment', poison)).rejects.toThrow('cannot handle note "poison pill"');
    expect((await rowsOf(db, order)).instance).toMatchObject({
      status: 'ACTIVE',
      failure_redelivery_key: null,
      first_failed_at: null,
    });

    store.down = false;
    clock.advance(600_000); // past the budget, but nothing was recorded: this is a first failure again
    await expect(pm.deliver('order-fulfilment', poison)).rejects.toThrow('cannot handle note');
    expect((await rowsOf(db, order)).instance).toMatchObject({
      status: 'ACTIVE',
      failure_redelivery_key: poison.id,
      first_failed_at: clock.now(),
    });
  });
});
