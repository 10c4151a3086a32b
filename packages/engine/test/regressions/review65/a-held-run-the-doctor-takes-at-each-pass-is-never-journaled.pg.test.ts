import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { holdRuns, type HeldRows } from '../../support/held-rows.ts';
import { parkedWaiters } from '../../support/parked-waiters.ts';
import { seedOpenChildren } from '../../support/seed-open-children.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { redispatchLostRuns } from '../../../src/store/redispatch-lost-runs.ts';
import { firstRunId } from '../../../src/store/repair-candidates-sql.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';

/**
 * Review 65, attacking ADR 0137 and its addendum (a run "held across sweeps for 60 s … is journaled
 * `run_held`"; "the set-based sweeps … note what they skipped and what they took"; invariant 3).
 *
 * The engine remembers a held run per RUN, whichever sweep saw it, and any sweep that takes the run forgets
 * it. An overdue parent P whose open child C another session holds for good cannot be expired: each expiry
 * sweep locks P, waits for C and gives up (held, noted). P is also a doctor candidate (R2: its signal wait's
 * timeout is due; its wake is queued, so the doctor re-dispatches nothing). The doctor's R1–R3 statement, at
 * the end of the same monitor pass, locks only P's row, which is free, answers P in `taken`, and
 * `noteHeldRuns` forgets P. The next pass's expiry starts counting again: P is never found "held for 60 s".
 *
 * Schedule: P parked on `awaitSignal('go', 3600 s)` with a 60 s deadline and one open 'propagate' child C;
 * the clock passes both; C's row is held (an operator's psql left in a transaction); monitor passes at 0, 30,
 * 61 and 121 s of the engine's clock, with the doctor (`repair.enabled`, as a deployment that runs it).
 * Expected: one `run_held` on P (sweep expiry) at 61 s, as without the doctor (the contrast test, and review
 * 64's held test of the same tree).
 */
describe('an overdue parent held for good behind its child is journaled though the doctor takes it (postgres)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let held: HeldRows | undefined;
  beforeEach(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    t = await createTestEngine({
      db,
      flows: [waiter],
      actions,
      config: { sweeps: { held_run_wait_ms: 200 }, repair: { enabled: true } },
    });
  });
  afterEach(async () => {
    await held?.rollback().catch(() => undefined);
    held = undefined;
    await t?.close();
    await db?.close();
  });

  async function heldParent(): Promise<string> {
    const [parentId] = await parkedWaiters(t, [60]);
    await seedOpenChildren(db, parentId!, 1);
    const child = (await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: parentId! } })).id;
    // Past the business deadline (60 s) and the signal wait's timeout (3600 s).
    t.clock.advance(3_700_000);
    held = await holdRuns(db.url!, [child]);
    return parentId!;
  }

  async function passes(doctor: boolean) {
    const out: { expired: number; journaled: number }[] = [];
    for (const advance of [0, 30_000, 31_000, 60_000]) {
      t.clock.advance(advance);
      const pass = await t.engine.monitorPass({ doctor });
      out.push({
        expired: pass.swept ? pass.runs.expired.length : -1,
        journaled: await db.prisma.anomalyLog.count({ where: { code: 'run_held' } }),
      });
    }
    return out;
  }

  it('with the doctor on: run_held on the parent after a minute held', async () => {
    const parentId = await heldParent();
    const seen = await passes(true);
    const entries = await db.prisma.anomalyLog.findMany({ where: { code: 'run_held' } });
    const parent = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: parentId } });
    // What the doctor's statement answers for P while C is held (budget 0: it re-dispatches nothing): taken.
    const doctorSays = await db.prisma.$transaction((tx) =>
      redispatchLostRuns(tx, {
        now: t.clock.now(),
        after: firstRunId,
        graceSeconds: 60,
        staleRunning: true,
        budget: 0,
        limit: 100,
      }),
    );
    expect({
      doctor: { held: doctorSays.held, taken: doctorSays.taken.map((id) => (id === parentId ? 'P' : id)) },
      passes: seen,
      parent: [parent.status, parent.expired_at, parent.stuck_reason],
      entries: entries.map((e) => ({
        run: e.run_id === parentId ? 'P' : e.run_id,
        sweep: (e.details as { sweep?: string }).sweep,
      })),
    }).toEqual({
      doctor: { held: [], taken: ['P'] },
      passes: [
        { expired: 0, journaled: 0 },
        { expired: 0, journaled: 0 },
        { expired: 0, journaled: 1 },
        { expired: 0, journaled: 1 },
      ],
      parent: ['Waiting', null, null],
      entries: [{ run: 'P', sweep: 'expiry' }],
    });
  }, 30_000);

  it('contrast: without the doctor, the same passes journal it once', async () => {
    const parentId = await heldParent();
    const seen = await passes(false);
    const entries = await db.prisma.anomalyLog.findMany({ where: { code: 'run_held' } });
    expect({
      passes: seen,
      entries: entries.map((e) => ({
        run: e.run_id === parentId ? 'P' : e.run_id,
        sweep: (e.details as { sweep?: string }).sweep,
      })),
    }).toEqual({
      passes: [
        { expired: 0, journaled: 0 },
        { expired: 0, journaled: 0 },
        { expired: 0, journaled: 1 },
        { expired: 0, journaled: 1 },
      ],
      entries: [{ run: 'P', sweep: 'expiry' }],
    });
  }, 30_000);
});
