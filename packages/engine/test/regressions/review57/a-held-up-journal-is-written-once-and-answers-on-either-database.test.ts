import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { journalHeldUpDelivery } from '../../../src/store/journal-held-up-delivery.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';

/**
 * Review 57 (ADR 0132 §3). `journalHeldUpDelivery` now runs as a batch transaction under a
 * transaction-scoped advisory lock. On PGlite (one connection; Prisma's batch transaction through its
 * adapter) it must answer, and five refusals of one key at once must journal one entry, as on
 * PostgreSQL. PGlite cannot hold a row from a second session, so a delivery is never held up there;
 * this calls the journal itself, as the delivery's catch does.
 */
describe(`review 57: the held-up journal on ${testDbKind()}`, () => {
  let db: Database | undefined;
  afterAll(async () => {
    await db?.close();
  });

  it('five held-up refusals of one key at once journal one entry and each answers', async () => {
    db = await openTestDatabase();
    const key = `k-${randomUUID()}`;
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        journalHeldUpDelivery(db!.prisma, {
          processName: 'r57-held',
          key,
          messageId: `m-${i}`,
          messageType: 'Add',
          limitMs: 1_000,
        }).then(
          (w) => (w ? 'wrote' : 'skipped'),
          (e: unknown) => `threw ${e instanceof Error ? e.message.slice(0, 200) : String(e)}`,
        ),
      ),
    );
    const rows = await db.prisma.$queryRaw<{ n: number }[]>`
      select count(*)::int as n from "sagaflow"."anomaly_log"
       where code = 'process_delivery_held_up' and details->>'key' = ${key}`;
    expect({ answers: [...answers].sort(), rows: rows[0]?.n }).toEqual({
      answers: ['skipped', 'skipped', 'skipped', 'skipped', 'wrote'],
      rows: 1,
    });
  }, 60_000);
});
