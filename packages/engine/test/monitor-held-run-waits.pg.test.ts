import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../src/testing/create-test-engine.ts';
import { holdRuns, waitersOn, type HeldRows } from './support/held-rows.ts';
import { openTestDatabase } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';
import { capturingLogger } from './support/capturing-logger.ts';
import { actions, waiter } from './repairs/support/repair-fixtures.ts';
import { parkedWaiters } from './support/parked-waiters.ts';

/**
 * ADR 0135: a monitor sweep waits for a run's row another session holds (a worker's round holds one for
 * a moment, longer on a loaded machine) within its allowance (`sweeps.held_run_wait_ms`), and past it
 * waits 100 ms for each further held run before passing it over until the next pass. CI found the
 * sweep that passed every held run over at once leaving an overdue run unexpired because a replay of
 * it was loading at that moment.
 */

/** Parked runs, one per deadline, all overdue by the test's clock. */
async function overdueWaitingRuns(t: TestEngine, deadlines: number[]): Promise<string[]> {
  const ids = await parkedWaiters(t, deadlines);
  t.clock.advance(Math.max(...deadlines) * 1000 + 60_000);
  return ids;
}

describe('the monitor waits for a run held for a moment (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let held: HeldRows | undefined;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    // A long allowance: the test lets the row go once it sees the sweep wait, however loaded the machine.
    t = await createTestEngine({ db, flows: [waiter], actions, config: { sweeps: { held_run_wait_ms: 60_000 } } });
  });
  afterAll(async () => {
    await held?.rollback().catch(() => undefined);
    await t?.close();
    await db?.close();
  });

  it('an overdue run whose row is held while the sweep reaches it is expired in that pass', async () => {
    const [runId] = await overdueWaitingRuns(t, [60]);
    held = await holdRuns(db.url!, [runId!]);
    let settled = false;
    const sweep = t.engine.sweepExpiredRuns().finally(() => (settled = true));
    // Progress, not time: the sweep waits on the held row (or, passing it over, has already answered).
    await waitFor('the sweep to wait on the held run or to answer', async () =>
      settled || (await waitersOn(db, held!.pid)).length > 0 ? true : undefined,
    );
    await held.rollback();
    expect((await sweep).expired).toEqual([runId]);
    expect((await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId! } })).expired_at).not.toBeNull();
  }, 60_000);
});

describe('past its allowance the monitor waits a moment per held run (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let held: HeldRows | undefined;
  const capture = capturingLogger();
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    t = await createTestEngine({
      db,
      flows: [waiter],
      actions,
      logger: capture.logger,
      config: { sweeps: { held_run_wait_ms: 300 } },
    });
  });
  afterAll(async () => {
    await held?.rollback().catch(() => undefined);
    await t?.close();
    await db?.close();
  });

  it('two runs held for good are each passed over, the second after the floor, and the free one is expired', async () => {
    // The held runs are the stalest: the sweep meets them first.
    const [first, second, free] = await overdueWaitingRuns(t, [60, 70, 80]);
    held = await holdRuns(db.url!, [first!, second!]);
    const pass = await t.engine.sweepExpiredRuns();
    expect(pass.expired).toEqual([free]);
    const passedOver = capture.lines
      .filter((l) => typeof l.msg === 'string' && l.msg.startsWith('expiry: run '))
      .map((l) => ({ runId: l.runId, waitedMs: l.waitedMs }));
    // The first spent the sweep's whole allowance; the second only the floor (100 ms).
    expect(passedOver).toEqual([
      { runId: first, waitedMs: 300 },
      { runId: second, waitedMs: 100 },
    ]);
    await held.rollback();
    held = undefined;
    // Let go, the next pass expires both.
    expect((await t.engine.sweepExpiredRuns()).expired.sort()).toEqual([first, second].sort());
  }, 60_000);
});
