import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { holdRuns, type HeldRows } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';
import { parkedWaiters } from '../../support/parked-waiters.ts';
import { copiesAhead, copyWithDeadline, isExpired } from './support/held-overdue.ts';

/**
 * Review 63, attacking ADR 0135's addendum §3 (the expiry sweep goes on where the last pass stopped, then
 * round from the stalest deadline up to there). Six overdue runs held for good at the head; a pass budget
 * that gets a pass through 2–3 of them (100 ms each); after the first pass stops part-way, two free runs
 * become overdue: one with a deadline before every other (behind the cursor), one with the same deadline as
 * a held run. Are the free runs all reached within a few passes, and is none expired twice?
 */
describe('review 63: the expiry cursor and runs behind it or at its deadline (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let held: HeldRows | undefined;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 6 });
    t = await createTestEngine({
      db,
      flows: [waiter],
      actions,
      config: { sweeps: { held_run_wait_ms: 0, pass_budget_ms: 250 } },
    });
  });
  afterAll(async () => {
    await held?.rollback().catch(() => undefined);
    await t?.close();
    await db?.close();
  });

  it('held: each free run is expired once, within the passes of one round', async () => {
    const [template, free] = await parkedWaiters(t, [600, 900]);
    const ahead = await copiesAhead(db, template!, 5);
    held = await holdRuns(db.url!, [...ahead, template!]);
    t.clock.advance(3_600_000);
    const first = await t.engine.monitorPass({ doctor: false });
    const deadlineOf = async (id: string) => (await db.prisma.flowRun.findUniqueOrThrow({ where: { id } })).expires_at!;
    const stalest = await copyWithDeadline(db, template!, new Date((await deadlineOf(ahead[0]!)).getTime() - 60_000));
    const sameAsHeld = await Promise.all(
      ahead.slice(0, 3).map(async (id) => copyWithDeadline(db, template!, await deadlineOf(id))),
    );
    const frees = [free!, stalest, ...sameAsHeld];
    const log: unknown[] = [first.swept ? first.runs : first];
    for (let i = 0; i < 6; i++) {
      const states = await Promise.all(frees.map((id) => isExpired(db, id)));
      if (states.every(Boolean)) break;
      const p = await t.engine.monitorPass({ doctor: false });
      log.push(p.swept ? p.runs : p);
    }
    const expiryStarts = await db.prisma.flowEvent.groupBy({
      by: ['run_id'],
      where: { type: 'run.expiry_started' },
      _count: { _all: true },
    });
    expect(
      {
        allFreeExpired: (await Promise.all(frees.map((id) => isExpired(db, id)))).every(Boolean),
        expiredTwice: expiryStarts.filter((g) => g._count._all > 1).length,
      },
      JSON.stringify(log),
    ).toEqual({ allFreeExpired: true, expiredTwice: 0 });
  }, 60_000);
});
