import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { recordOf, drivenOn } from '../review20/record.ts';
import { replayChild, runDueWakes, trackedDeps } from '../review23/support/sibling-children.ts';
import { gate } from '../harness.ts';
import { failingDeps } from '../../support/failing-deps.ts';
import { twoSideParent, watchHolds } from './support/outage.ts';

/** The parent parked with `s1` and `s2` running, each held in its action; the worker's transactions fail on demand. */
async function parkedWithTwoSidesOut(db: Database) {
  const s = twoSideParent(db);
  const runId = await s.start();
  const holds = watchHolds(s.e.runtime);
  const h1 = s.holdAction('s1');
  const h2 = s.holdAction('s2');
  const failing = failingDeps(s.e.runtime);
  const r1 = trackedDeps(db, failing.deps);
  const live = executeRun(r1.deps, runId);
  await h1.reached;
  await h2.reached;
  expect(await live).toBe('parked');
  await r1.quiet();
  return { s, runId, holds, h1, h2, failing };
}

/**
 * The backlog holds one outcome once its first write is done (the one handed over meanwhile); written now
 * (as the pool's next poll would), `s2` is recorded once and the parent driven on to its one end.
 */
async function expectSecondOutcomeKept(db: Database, s: ReturnType<typeof twoSideParent>, runId: string) {
  const heldAfter = s.e.runtime.heldOutcomes.size;
  await s.e.runtime.heldOutcomes.retry();
  const s2Row = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 4 } });
  expect(await replayChild(db, s.e, runId, 2)).toBe('Completed');
  await runDueWakes(db, s.e, runId);
  const rec = await recordOf(db, runId);
  expect({
    heldAfterFirstWrite: heldAfter,
    s2: [s2Row.status, s2Row.attempts],
    parent: [rec.run.status, rec.ends, rec.afterTheEnd],
    duplicates: rec.duplicateStepOutcomes,
    drivenOn: await drivenOn(db, s.e, runId),
    ran: [s.ran.s1, s.ran.s2],
  }).toEqual({
    heldAfterFirstWrite: 1,
    s2: ['Completed', 1],
    parent: ['Completed', 1, []],
    duplicates: [],
    drivenOn: true,
    ran: [1, 1],
  });
}

/**
 * Review 27, attack 3/5 (ADR 0010 decision 2, ADR 0093 decision 1). Two late outcomes of one run meet an
 * outage: `Promise.all([ctx.child(A), ctx.action(s1), ctx.action(s2)])` parks on A (R1) while s1 and s2
 * run. The database goes away; s1 ends, its late write spends its budget and goes to the engine's backlog
 * (HeldOutcomes). The database answers; the backlog's retry writes s1 — and while that write is on its way
 * (driven: held in its own `action.completed` listener, which the retry awaits after its commit), s2 ends,
 * its late write meets the outage again (for this worker) and is handed to the backlog for the same run.
 * Then the retry for s1 finishes.
 *
 * Guarantees: s2's outcome is not lost silently (recorded once, or the run has a wake due or a stuck
 * reason); the side effect of s2 ran once per recorded attempt; the parent ends once.
 */
describe(`a late outcome handed to the backlog while the backlog writes its run (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it("the second outcome survives while the first one's commit is on its way back (no listener)", async () => {
    const { s, runId, holds, h1, h2, failing } = await parkedWithTwoSidesOut(db);

    failing.state.failing = true;
    h1.release();
    await holds.heldFor(3);

    // The database answers. The backlog's transaction for the run commits, and its answer is held at a
    // gate (as a slow network would): meanwhile s2 ends and its late write is handed to the backlog.
    failing.state.failing = false;
    const driver = s.e.runtime.driver;
    if (!driver) throw new Error('no driver');
    const committed = gate();
    const answer = gate();
    let pauseNext = true;
    s.e.runtime.driver = {
      ...driver,
      transaction: async (fn, limits) => {
        const out = await driver.transaction(fn, limits);
        if (pauseNext) {
          pauseNext = false;
          committed.open();
          await answer.promise;
        }
        return out;
      },
    };
    const retrying = s.e.runtime.heldOutcomes.retry();
    await committed.promise;
    failing.state.failing = true;
    h2.release();
    await holds.heldFor(4);
    answer.open();
    await retrying;
    s.e.runtime.driver = driver;
    failing.state.failing = false;
    await expectSecondOutcomeKept(db, s, runId);
  });

  it('the second outcome of the run survives the first one being written', async () => {
    const { s, runId, holds, h1, h2, failing } = await parkedWithTwoSidesOut(db);

    // The outage: s1 ends, its late write fails through its budget and reaches the backlog.
    failing.state.failing = true;
    h1.release();
    await holds.heldFor(3);
    expect(s.e.runtime.heldOutcomes.size).toBe(1);

    // The database answers; the backlog writes s1. Right after that commit (in the listener the retry
    // awaits), s2 ends and its late write meets the outage and is handed to the backlog for the run.
    failing.state.failing = false;
    const inListener = gate();
    let fired = false;
    s.e.events.on('action.completed', async (ev) => {
      if (ev.name !== s.names.s1 || fired) return;
      fired = true;
      failing.state.failing = true;
      h2.release();
      await holds.heldFor(4);
      inListener.open();
    });
    await s.e.runtime.heldOutcomes.retry();
    await inListener.promise;
    failing.state.failing = false;
    await expectSecondOutcomeKept(db, s, runId);
  });
});
