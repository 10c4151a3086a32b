import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { claimOutboxBatch, type DbOutboxMessage } from '../../../src/store/claim-outbox-batch.ts';
import { markOutboxBatchPublished } from '../../../src/store/mark-outbox-batch-published.ts';
import { recordOutboxFailure } from '../../../src/store/record-outbox-failure.ts';
import { releaseOutboxClaim } from '../../../src/store/release-outbox-claim.ts';
import { requeueOutboxRow } from '../../../src/store/outbox/requeue-outbox-row.ts';
import { renewOutboxClaim } from '../../../src/store/renew-outbox-claim.ts';
import { clearOutbox, outboxRow, seedOutbox } from '../../outbox/seed-outbox.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';

const window = 30;
const at = (seconds: number) => new Date(Date.UTC(2031, 0, 1) + seconds * 1000);

/**
 * Review 68, HELD: ADR 0139 §1, "renewing never takes a row from anybody". A renewal sent by a relay whose
 * claim is no longer its own (a rival claimed the row after the window lapsed; the row was marked
 * Published; it died, was requeued (ADR 0104) and claimed afresh at the same attempt number; it was handed
 * back and claimed again at the same attempt; its own failure was recorded) keeps nothing and writes
 * nothing: status, attempts, available_at and published_at are as the newer owner left them.
 */
describe(`review 68: a stale renewal keeps nothing and changes nothing (${testDbKind()})`, () => {
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
  const renew = (row: DbOutboxMessage, now: Date) =>
    renewOutboxClaim(db.prisma, {
      rows: [{ id: row.id, attempts: row.attempts, claimed_until: new Date(row.claimed_until) }],
      now,
      visibilityTimeoutSeconds: window,
      lockWaitMs: 1_000,
      timeoutMs: 10_000,
    });
  const snapshot = async (messageId: string) => {
    const r = await outboxRow(db, messageId);
    return { status: r.status, attempts: r.attempts, available_at: r.available_at, published_at: r.published_at };
  };

  it('a claim a rival took after the window lapsed', async () => {
    const [m] = await seedOutbox(db, [{ createdAt: at(-60) }]);
    const stale = await claim(at(0));
    const rival = await claim(at(window + 1));
    expect(rival.attempts).toBe(2);
    const before = await snapshot(m!);
    expect((await renew(stale, at(window + 2))).size).toBe(0);
    expect(await snapshot(m!)).toEqual(before);
  });

  it('a row marked Published (by the relay itself or a rival) is not revived by a late renewal', async () => {
    const [m] = await seedOutbox(db, [{ createdAt: at(-60) }]);
    const mine = await claim(at(0));
    const { marked } = await markOutboxBatchPublished(db.prisma, {
      ids: [mine.id],
      now: at(1),
      lockWaitMs: 1_000,
      timeoutMs: 10_000,
    });
    expect(marked.has(mine.id)).toBe(true);
    const before = await snapshot(m!);
    expect((await renew(mine, at(2))).size).toBe(0);
    expect(await snapshot(m!)).toEqual(before);
    expect(before.status).toBe('Published');
  });

  it('a row that died, was requeued and claimed afresh at the same attempt number', async () => {
    const [m] = await seedOutbox(db, [{ createdAt: at(-60) }]);
    const stale = await claim(at(0)); // attempt 1
    expect(
      await recordOutboxFailure(db.prisma, {
        id: stale.id,
        attempts: stale.attempts,
        claimedUntil: stale.claimed_until,
        maxAttempts: 1,
        retryAt: at(1),
        error: 'boom',
      }),
    ).toBe('Dead');
    expect((await renew(stale, at(1))).size).toBe(0); // Dead: not revived
    expect((await snapshot(m!)).status).toBe('Dead');
    expect(await requeueOutboxRow(db.prisma, { id: stale.id, now: at(2) })).toBe(true);
    const fresh = await claim(at(3));
    expect(fresh.attempts).toBe(stale.attempts);
    const before = await snapshot(m!);
    expect((await renew(stale, at(4))).size).toBe(0);
    expect(await snapshot(m!)).toEqual(before);
    // The fresh claim's own renewal is kept, and moves its window.
    const renewed = await renew(fresh, at(5));
    expect(renewed.get(fresh.id)?.getTime()).toBe(at(5 + window).getTime());
  });

  it('a row handed back and claimed again at the same attempt number, and one whose own failure was recorded', async () => {
    const [m] = await seedOutbox(db, [{ createdAt: at(-60) }]);
    const stale = await claim(at(0)); // attempt 1, the relay stalls
    const rival = await claim(at(window + 1)); // attempt 2
    expect(
      await releaseOutboxClaim(db.prisma, {
        id: rival.id,
        attempts: rival.attempts,
        claimedUntil: rival.claimed_until,
        now: at(window + 2),
      }),
    ).toBe(true);
    const third = await claim(at(window + 3)); // attempt 2 again, as the rival had
    expect(third.attempts).toBe(rival.attempts);
    const before = await snapshot(m!);
    expect((await renew(stale, at(window + 4))).size).toBe(0);
    expect((await renew(rival, at(window + 4))).size).toBe(0);
    expect(await snapshot(m!)).toEqual(before);
    // The third claim fails; its own renewal afterwards (a relay renewing a row it just failed) keeps nothing.
    expect(
      await recordOutboxFailure(db.prisma, {
        id: third.id,
        attempts: third.attempts,
        claimedUntil: third.claimed_until,
        maxAttempts: 5,
        retryAt: at(window + 10),
        error: 'boom',
      }),
    ).toBe('Pending');
    const failed = await snapshot(m!);
    expect((await renew(third, at(window + 5))).size).toBe(0);
    expect(await snapshot(m!)).toEqual(failed);
    expect(failed.available_at.getTime()).toBe(at(window + 10).getTime());
  });
});
