import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';
import { parkedWaiters, seedOpenChildren, visibility } from './support/overdue-runs.ts';

/**
 * Review 62 (ADR 0134 §1 / ADR 0135: one run the monitor cannot expire now is left to the next pass and
 * "the sweep goes on to its next run"; seed 000: the expiry of one run never holds up the sweep, and a run
 * that cannot be expired says so, `expiry_failed`; invariant 3: every stuck run is visible with its reason).
 *
 * Attacked: an overdue parent whose expiry transaction outlasts `sweeps.transaction_timeout_ms`. The expiry
 * cancelled the parent's open children one `cancelTree` (five statements) at a time inside the run's
 * transaction; with 1,500 children that took longer than the 1 s limit set here (on this loaded machine,
 * 2,000 children took 6.9 s with no limit, so the default 30 s was passed at about 9,000). Prisma's own
 * interactive-transaction timeout (the same limit) then failed the next statement with P2028, which
 * `onMonitoredRun` did not treat as a held run: it left the sweep, and the monitor pass threw.
 *
 * Since ADR 0136 the expiry asks the whole tree to cancel in one statement, and 1,500 children no longer
 * outlast 1 s; the tree here is one child over 100,000 grandchildren, which still does (the limit then
 * cancels the statement, 57014, rather than the transaction), so the pass meets the same failure.
 */
describe('review 62: an overdue parent whose expiry outlasts the sweep transaction limit (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    t = await createTestEngine({
      db,
      flows: [waiter],
      actions,
      config: { sweeps: { transaction_timeout_ms: 1_000 } },
    });
  });
  afterAll(async () => {
    await t?.close();
    await db?.close();
  });

  it('the monitor pass still expires the other overdue run, and the parent shows why it is not expired', async () => {
    // The parent's deadline is the earliest: the run sweep (stalest deadline first) meets it first.
    const [parent, other] = await parkedWaiters(t, [60, 120]);
    await seedOpenChildren(db, parent!, 1);
    const child = await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: parent! } });
    await seedOpenChildren(db, child.id, 100_000);
    t.clock.advance(300_000);

    const outcomes: string[] = [];
    for (let pass = 1; pass <= 2; pass++)
      outcomes.push(
        await t.engine.monitorPass({ doctor: false }).then(
          (p) => (p.swept ? `swept: runs expired ${p.runs.expired.length}` : `not swept: ${p.reason}`),
          (e: unknown) => `threw ${(e as { code?: string }).code ?? ''}: ${String((e as Error).message).slice(0, 160)}`,
        ),
      );
    const seen = {
      passes: outcomes,
      other: (await visibility(db, other!)).expired,
      parent: await visibility(db, parent!),
    };
    // Each pass answers and expires the other overdue run; the parent, which no pass could expire, is
    // visibly stuck (a stuck reason, or an anomaly journaled for it).
    expect(
      {
        passesAnswered: seen.passes.every((p) => p.startsWith('swept')),
        otherExpired: seen.other,
        parentVisible: seen.parent.stuckReason !== null || seen.parent.anomalies.length > 0,
      },
      JSON.stringify(seen, null, 1),
    ).toEqual({ passesAnswered: true, otherExpired: true, parentVisible: true });
  }, 60_000);
});
