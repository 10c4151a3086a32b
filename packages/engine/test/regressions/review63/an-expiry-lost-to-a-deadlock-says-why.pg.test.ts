import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { capturingLogger } from '../../support/capturing-logger.ts';
import { holdRuns, waitForWaiters, type HeldRows } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';
import { parkedWaiters } from '../../support/parked-waiters.ts';
import { seedOpenChildren, visibility } from '../review62/support/overdue-runs.ts';

/**
 * Review 63, attacking ADR 0135's addendum §2: any failure of a run's transaction other than a given-up lock
 * wait is `RunSweepFailed`, and the expiry holds the run off with the stuck reason `expiry_failed: past its
 * business deadline, but its expiry could not be written (attempt n): …` and journals `expiry_failed`
 * (seed 000: "The line carries the throw").
 *
 * The failure: a deadlock between the parent's expiry (it locks the parent, then its open child) and a
 * child's finish (it locks the child, then its parent: `settleParentStep`). Another session plays the
 * child's finish: it holds the child, and once the sweep waits for it, it locks the parent. Its
 * `deadlock_timeout` is long, so PostgreSQL picks the sweep's transaction (40P01). The allowance is long
 * (`sweeps.held_run_wait_ms` 60 s) so the sweep's wait is not given up first.
 */
describe('review 63: an overdue parent whose expiry loses a deadlock to its child (real PostgreSQL)', () => {
  let db: (Database & { url?: string }) | undefined;
  let t: TestEngine | undefined;
  let child: HeldRows | undefined;
  const capture = capturingLogger();
  afterEach(async () => {
    await child?.rollback().catch(() => undefined);
    child = undefined;
    await t?.close();
    await db?.close();
    t = undefined;
    db = undefined;
  });

  async function deadlockedSweep() {
    db = await openTestDatabase({ poolSize: 6 });
    t = await createTestEngine({
      db,
      flows: [waiter],
      actions,
      logger: capture.logger,
      config: { sweeps: { held_run_wait_ms: 60_000 } },
    });
    const [parent] = await parkedWaiters(t, [600]);
    await seedOpenChildren(db, parent!, 1);
    const [row] = await db.prisma.$queryRaw<{ id: string }[]>`
      select id::text as id from "sagaflow"."flow_runs" where parent_run_id = ${parent!}::uuid`;
    child = await holdRuns(db.url!, [row!.id], '30s');
    t.clock.advance(3_600_000);
    const sweep = t.engine.sweepExpiredRuns();
    await waitForWaiters(db, child.pid);
    // The child's finish now locks its parent: a lock cycle with the sweep.
    // ... and, once it has it, commits (lets both go), as the finish's transaction does.
    const holder = child;
    const finished = holder.hold(parent!).then(() => holder.rollback());
    const before = capture.lines.length;
    const first = await sweep;
    await finished;
    child = undefined;
    const logged = capture.lines
      .slice(before)
      .map((l) => `${String(l.msg)} [err: ${JSON.stringify((l as { err?: unknown }).err ?? null).slice(0, 400)}]`);
    return { parent: parent!, first, afterFirst: await visibility(db, parent!), logged };
  }

  it("the run's stuck reason and its expiry_failed entry say what failed (a deadlock)", async () => {
    const r = await deadlockedSweep();
    const entry = await db!.prisma.anomalyLog.findFirst({ where: { run_id: r.parent, code: 'expiry_failed' } });
    expect(
      {
        heldOff: r.first.failed.length,
        stuckReasonNamesTheCause: /deadlock/i.test(r.afterFirst.stuckReason ?? ''),
        journalNamesTheCause: /deadlock/i.test(entry?.message ?? ''),
      },
      JSON.stringify({ ...r, journal: entry?.message }),
    ).toEqual({ heldOff: 1, stuckReasonNamesTheCause: true, journalNamesTheCause: true });
  }, 60_000);

  it('held: once its hold-off window opens the run is expired, its stuck reason cleared and the count kept', async () => {
    const r = await deadlockedSweep();
    // Before the window opens, the run is left alone.
    expect((await t!.engine.sweepExpiredRuns()).failed).toEqual([]);
    t!.clock.advance(31_000);
    const later = await t!.engine.sweepExpiredRuns();
    const after = await visibility(db!, r.parent);
    expect(
      { heldOff: r.first.failed.length, expired: later.expired, after },
      JSON.stringify({ first: r.first, afterFirst: r.afterFirst }),
    ).toEqual({
      heldOff: 1,
      expired: [r.parent],
      after: { expired: true, stuckReason: null, expiryAttempts: 1, anomalies: ['expiry_failed'] },
    });
  }, 60_000);
});
