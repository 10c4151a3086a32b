import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { finishedByMonitor } from '../../src/api/sweep-unfinished-terminates.ts';
import { terminateBatch } from '../../src/api/terminate-run.ts';
import type { Database } from '../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../src/testing/create-test-engine.ts';
import { fenceOnly, insertRun, parked, pass, states } from '../regressions/review67/support/tree.ts';
import { holdRuns, type HeldRows } from '../support/held-rows.ts';
import { openTestDatabase } from '../support/test-database.ts';

const reason = 'stopped by ops';

/**
 * ADR 0141: the monitor's terminate finisher (ADR 0140) walks past the runs other sessions hold. A terminate of
 * P stopped after its fence; P's first 100 children by id (a whole batch of the walk, which goes by depth, then
 * id) are held by another session, and 5 more after them are free. Before, each batch listed the same held
 * front and the pass ended none of the 5 until the hold ended. Now one pass ends the 5 and leaves the 100,
 * which the pass after the hold ends ends.
 */
describe('the terminate finisher walks past a held front of the walk (postgres)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let held: HeldRows | null = null;
  beforeEach(async () => {
    db = await openTestDatabase({ poolSize: 6 });
    t = await createTestEngine({
      db,
      flows: [parked],
      actions: [],
      config: { monitor: { unfinished_terminate_after_seconds: 60 }, sweeps: { transaction_timeout_ms: 2000 } },
    });
  });
  afterEach(async () => {
    await held?.rollback();
    held = null;
    await t?.close();
    await db?.close();
  });

  it('ends the free runs after a batch of held ones in the same pass, and the held ones once let go', async () => {
    const p = await insertRun(db);
    const children: string[] = [];
    for (let k = 0; k < terminateBatch + 5; k++) children.push(await insertRun(db, { parent: p, seq: k + 1 }));
    const byId = [...children].sort();
    const front = byId.slice(0, terminateBatch);
    const free = byId.slice(terminateBatch);
    t.clock.advance(1000);
    expect(await fenceOnly(t, db, p, reason)).toBe(children.length);
    t.clock.advance(65_000);
    held = await holdRuns(db.url!, front);

    expect(await pass(t)).toBe(free.length);
    const first = await states(db, children);
    for (const id of free)
      expect(first[id]).toEqual({
        status: 'Terminated',
        message: `parent ${p} was terminated: ${reason}`,
        finishedBy: [finishedByMonitor],
      });
    expect(front.filter((id) => first[id]?.status !== 'Waiting')).toEqual([]);

    await held.rollback();
    held = null;
    expect(await pass(t)).toBe(front.length);
    const all = await states(db, children);
    expect(Object.values(all).filter((r) => r.status !== 'Terminated' || r.finishedBy.length !== 1)).toEqual([]);
    expect(await pass(t)).toBe(0);
  });
});
