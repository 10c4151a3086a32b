import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { fenceOnly, insertRun, parked, pass, states } from './support/tree.ts';

/**
 * Review 67, ADR 0140 §3: "Within `monitor.unfinished_terminate_after_seconds` of the fence, the monitor leaves
 * the tree to the terminate, which may still be walking it."
 *
 * P → C, S1, S2 ('propagate'). An operator cancelled C two minutes ago with a 1 s cleanup window; C is still
 * open (its replay has not come yet: the workers behind, or its last compensation still running). Now P is
 * terminated: its first commit terminates P and fences S1 and S2 (windows closed now); C's window, already
 * closed, keeps its old deadline (the fence only moves a later one). The terminate's batches have not run yet.
 * One second after the fence, a monitor pass runs.
 *
 * `findUnfinishedTerminates` dates P's fence by the oldest `cancel_deadline_at` among P's open children, which
 * is C's cancel's (two minutes old), so P is taken at once, and the walk under it ends every open run of P's
 * tree, including S1 and S2, fenced one second before, each stamped `finished_by: monitor: the terminate that
 * fenced this run stopped before its batches ended it` although the terminate had not stopped.
 */
describe(`a child cancelled before its parent's terminate (${testDbKind()})`, () => {
  let db: Database;
  let t: TestEngine;
  beforeEach(async () => {
    db = await openTestDatabase({ poolSize: 6 });
    t = await createTestEngine({
      db,
      flows: [parked],
      actions: [],
      config: { monitor: { unfinished_terminate_after_seconds: 60 } },
    });
  });
  afterEach(async () => {
    await t?.close();
    await db?.close();
  });

  it('within the grace of the terminate’s fence, the monitor ends none of the runs it fenced', async () => {
    const p = await insertRun(db);
    const c = await insertRun(db, { parent: p, seq: 1 });
    const s1 = await insertRun(db, { parent: p, seq: 2 });
    const s2 = await insertRun(db, { parent: p, seq: 3 });
    expect(await t.engine.cancel(c, { reason: 'customer asked', cleanupSeconds: 1 })).toEqual({ requested: true });
    t.clock.advance(120_000);

    // S1 and S2 fenced; C's window, closed already, is not moved (the fence reaches a window still open).
    expect(await fenceOnly(t, db, p, 'stopped by ops')).toBe(2);
    t.clock.advance(1000);
    const ended = await pass(t);
    const seen = await states(db, [s1, s2]);
    expect({ ended, s1: seen[s1], s2: seen[s2] }).toEqual({
      ended: 0,
      s1: { status: 'Waiting', message: null, finishedBy: [] },
      s2: { status: 'Waiting', message: null, finishedBy: [] },
    });
  });
});
