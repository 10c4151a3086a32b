import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { claimOutboxBatch, type DbOutboxMessage } from '../../src/store/claim-outbox-batch.ts';
import { recordOutboxFailure } from '../../src/store/record-outbox-failure.ts';
import { releaseOutboxClaim } from '../../src/store/release-outbox-claim.ts';
import { requeueOutboxRow } from '../../src/store/outbox/requeue-outbox-row.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';
import { clearOutbox, outboxRow, seedOutbox } from './seed-outbox.ts';

const window = 30;
const at = (seconds: number) => new Date(Date.UTC(2030, 0, 1) + seconds * 1000);

/**
 * ADR 0104's addendum: a publisher whose claim lapsed (stalled past its window and its publish
 * deadline) must not write its failure or hand-back over a newer claim, even one that counts the same
 * attempt number again: a hand-back gives a counted attempt back, and a requeue counts from 0. The
 * claim's window end, written to available_at, is its own mark.
 */
describe(`a lapsed outbox claim cannot write over a newer claim of the same attempt (${testDbKind()})`, () => {
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

  const claim = async (now: Date): Promise<DbOutboxMessage> => {
    const rows = await claimOutboxBatch(db.prisma, {
      now,
      limit: 10,
      visibilityTimeoutSeconds: window,
      timeoutMs: 10_000,
    });
    expect(rows).toHaveLength(1);
    return rows[0]!;
  };
  const fail = (row: DbOutboxMessage, error: string, maxAttempts = 5) =>
    recordOutboxFailure(db.prisma, {
      id: row.id,
      attempts: row.attempts,
      claimedUntil: row.claimed_until,
      maxAttempts,
      retryAt: at(10_000),
      error,
    });

  it('after a newer claim was handed back to the same attempt number, the stale failure is refused', async () => {
    const [messageId] = await seedOutbox(db, [{ createdAt: at(-60) }]);
    const stale = await claim(at(0)); // attempt 1, then the publisher stalls
    expect(stale.attempts).toBe(1);
    const newer = await claim(at(window + 1)); // the window lapsed: attempt 2
    expect(newer.attempts).toBe(2);
    // The newer publisher hands it back untried: attempt 1 again, due now.
    expect(
      await releaseOutboxClaim(db.prisma, {
        id: newer.id,
        attempts: newer.attempts,
        claimedUntil: newer.claimed_until,
        now: at(window + 2),
      }),
    ).toBe(true);
    const before = await outboxRow(db, messageId!);
    expect(before.attempts).toBe(1);

    expect(await fail(stale, 'stale publisher woke up')).toBeNull();
    const after = await outboxRow(db, messageId!);
    expect({ status: after.status, last_error: after.last_error, available_at: after.available_at }).toEqual({
      status: 'Pending',
      last_error: null,
      available_at: before.available_at,
    });
    // Nor may it hand the row back a second time.
    expect(
      await releaseOutboxClaim(db.prisma, {
        id: stale.id,
        attempts: stale.attempts,
        claimedUntil: stale.claimed_until,
        now: at(window + 3),
      }),
    ).toBe(false);
    expect((await outboxRow(db, messageId!)).attempts).toBe(1);
  });

  it('after the row died and was requeued, the stale failure is refused on the new claim of that attempt', async () => {
    const [messageId] = await seedOutbox(db, [{ createdAt: at(-60) }]);
    const stale = await claim(at(0)); // attempt 1, stalls
    const second = await claim(at(window + 1)); // attempt 2, fails for good
    expect(await fail(second, 'receiver gone', 2)).toBe('Dead');
    expect(await requeueOutboxRow(db.prisma, { id: second.id, now: at(window + 100) })).toBe(true);
    const fresh = await claim(at(window + 101)); // counted from 0 again: attempt 1
    expect(fresh.attempts).toBe(stale.attempts);

    expect(await fail(stale, 'stale publisher woke up', 2)).toBeNull();
    const row = await outboxRow(db, messageId!);
    expect({ status: row.status, attempts: row.attempts, last_error: row.last_error }).toEqual({
      status: 'Pending',
      attempts: 1,
      last_error: 'receiver gone',
    });
    // The fresh claim's own outcome still lands.
    expect(await fail(fresh, 'still down', 2)).toBe('Pending');
  });
});
