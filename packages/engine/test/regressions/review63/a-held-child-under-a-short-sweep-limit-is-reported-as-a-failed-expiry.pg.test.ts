import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { capturingLogger } from '../../support/capturing-logger.ts';
import { holdRuns, type HeldRows } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';
import { parkedWaiters } from '../../support/parked-waiters.ts';
import { seedOpenChildren, visibility } from '../review62/support/overdue-runs.ts';

/**
 * Review 63, attacking ADR 0135's addendum §1–§2: "Only a given-up lock wait (55P03) is 'held'. Any other
 * failure … is answered as `RunSweepFailed`" and held off as `expiry_failed`. The lock wait a sweep gives
 * (`lock_timeout` = `sweeps.held_run_wait_ms`, default 1000 ms) is not bounded by the sweep's own limit
 * (`sweeps.transaction_timeout_ms`, 100 ms to 600 s, no check between the two). A host that lowers the
 * limit below the allowance (here 500 ms, the allowance left at its default) makes a row that is merely
 * held (a child of an overdue parent, held by another session) run out of the transaction's limit before
 * its lock wait is given up.
 */
describe('review 63: a held child of an overdue parent, sweeps.transaction_timeout_ms below the allowance (real PostgreSQL)', () => {
  let db: (Database & { url?: string }) | undefined;
  let t: TestEngine | undefined;
  let held: HeldRows | undefined;
  const capture = capturingLogger();
  afterEach(async () => {
    await held?.rollback().catch(() => undefined);
    held = undefined;
    await t?.close();
    await db?.close();
    t = undefined;
    db = undefined;
  });

  async function scenario(sweeps: { transaction_timeout_ms?: number; held_run_wait_ms?: number }) {
    db = await openTestDatabase({ poolSize: 6 });
    t = await createTestEngine({ db, flows: [waiter], actions, logger: capture.logger, config: { sweeps } });
    const [parent] = await parkedWaiters(t, [600]);
    await seedOpenChildren(db, parent!, 1);
    const [child] = await db.prisma.$queryRaw<{ id: string }[]>`
      select id::text as id from "sagaflow"."flow_runs" where parent_run_id = ${parent!}::uuid`;
    // Another session holds the child (an operator's psql, a host's transaction on it).
    held = await holdRuns(db.url!, [child!.id]);
    t.clock.advance(3_600_000);
    const first = await t.engine.sweepExpiredRuns();
    const whileHeld = await visibility(db, parent!);
    await held.rollback();
    held = undefined;
    // Let go: the next sweep, at the same clock, expires the parent (a held run is left to the next pass).
    const second = await t.engine.sweepExpiredRuns();
    const after = await visibility(db, parent!);
    return { parent: parent!, first, whileHeld, second, after };
  }

  it('a held child is passed over as held: nothing counted or journaled, and the parent is expired once it is let go', async () => {
    const r = await scenario({ transaction_timeout_ms: 500 });
    expect(
      {
        failedWhileHeld: r.first.failed.length,
        expiryAttemptsWhileHeld: r.whileHeld.expiryAttempts,
        stuckReasonWhileHeld: r.whileHeld.stuckReason,
        anomaliesWhileHeld: r.whileHeld.anomalies,
        expiredOnceLetGo: r.after.expired,
      },
      JSON.stringify(r),
    ).toEqual({
      failedWhileHeld: 0,
      expiryAttemptsWhileHeld: 0,
      stuckReasonWhileHeld: null,
      anomaliesWhileHeld: [],
      expiredOnceLetGo: true,
    });
  }, 60_000);

  it('control (held): with the limit above the allowance, the same held child is passed over and expired once let go', async () => {
    const r = await scenario({ held_run_wait_ms: 300 });
    expect(
      { failed: r.first.failed.length, attempts: r.whileHeld.expiryAttempts, expiredOnceLetGo: r.after.expired },
      JSON.stringify(r),
    ).toEqual({ failed: 0, attempts: 0, expiredOnceLetGo: true });
  }, 60_000);
});
