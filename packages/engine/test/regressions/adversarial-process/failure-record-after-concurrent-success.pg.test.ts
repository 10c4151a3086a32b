import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { orderFulfilment } from '../../process/support/order-fulfilment.ts';
import { msg, newOrderId, processManagerOn, rowsOf } from '../../process/support/process-harness.ts';

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const budgetSeconds = 300;

/**
 * Seed 002: "When the event the record names later succeeds, the record is cleared", and a failing
 * event the instance already counts as handled records nothing. Worker A's delivery of M fails (a
 * store statement after the lock throws) while worker B waits on the lock with the same M. A rolls
 * back, B applies M and commits, and only THEN does A's failure record transaction run: it reads the
 * row fresh, sees no record and writes one naming M, which is already in the inbox. M's redeliveries
 * are duplicates from then on, so nothing ever clears it.
 */
describe('failure record written after the same message succeeded on another worker (postgres)', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 8 });
  });
  afterAll(async () => {
    await db.close();
  });

  /** Two workers on one database; A's delivery of `failId` throws after the lock, once B is queued behind it. */
  async function raceFailureAgainstSuccess() {
    const clock = new TestClock(new Date('2026-03-01T10:00:00.000Z'));
    const config = { quarantine_after_seconds: budgetSeconds, store_retry: { max_attempts: 1 } };
    const processes = [orderFulfilment()];
    const order = newOrderId();
    const m = msg.inventoryReserved(order);
    let aLocked!: () => void;
    const aHasLock = new Promise<void>((r) => (aLocked = r));
    const workerA = processManagerOn(db, {
      processes,
      config,
      clock,
      faults: {
        afterLock: async ({ messageId }) => {
          if (messageId !== m.id) return;
          aLocked();
          await pause(300);
          throw new Error('canceling statement due to statement timeout');
        },
      },
    });
    const workerB = processManagerOn(db, { processes, config, clock });
    await workerB.pm.deliver('order-fulfilment', msg.paymentCaptured(order));
    const a = workerA.pm.deliver('order-fulfilment', m).then(
      (r) => r,
      (e: unknown) => e,
    );
    await aHasLock;
    const b = workerB.pm.deliver('order-fulfilment', m);
    const [ra, rb] = await Promise.all([a, b]);
    return { order, m, clock, workerB, ra, rb };
  }

  it('leaves no failure record naming a message that is already in the inbox', async () => {
    const { order, m, ra, rb } = await raceFailureAgainstSuccess();
    expect(ra).toBeInstanceOf(Error);
    expect(rb).toMatchObject({ outcome: 'applied', to: 'BookingShipment' });
    const rows = await rowsOf(db, order);
    expect(rows.inbox.map((i) => i.message_id)).toContain(m.id);
    expect(rows.instance).toMatchObject({ status: 'ACTIVE', current_state: 'BookingShipment' });
    // M succeeded: no failure is on record for it.
    expect({
      failure_redelivery_key: rows.instance?.failure_redelivery_key,
      first_failed_at: rows.instance?.first_failed_at,
    }).toEqual({ failure_redelivery_key: null, first_failed_at: null });
  });

  it("a later message's first failure is recorded and rethrown, not quarantined on the stale record's clock", async () => {
    const { order, clock, workerB } = await raceFailureAgainstSuccess();
    clock.advance(budgetSeconds * 1000 + 60_000);
    const poison = msg.note(order, 'poison pill');
    // Its first failure: seed 002 says write the record and rethrow.
    const first = await workerB.pm.deliver('order-fulfilment', poison).then(
      (r) => r,
      (e: unknown) => e,
    );
    const rows = await rowsOf(db, order);
    expect(rows.instance?.status).toBe('ACTIVE');
    expect(rows.transitions.filter((t) => t.outcome === 'quarantined')).toHaveLength(0);
    expect(first).toBeInstanceOf(Error);
  });
});
