import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { finishedByMonitor } from '../../../src/api/sweep-unfinished-terminates.ts';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { holdRuns, type HeldRows } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { fenceOnly, insertRun, parked, pass, states } from './support/tree.ts';

const reason = 'stopped by ops';

/**
 * Review 67, HELD: ADR 0140 §2 for a held run with no children of its own. P → C, S1, S2, S3; C → G; P's
 * terminate stops after its fence; another session holds S2 (a leaf). Past the grace, one pass ends C, G, S1
 * and S3 and passes S2 over; once let go, the next pass ends S2. Each is Terminated once, with the batch's reason.
 */
describe('a held fenced leaf is passed over, the rest ended, and it is ended once let go (postgres)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let held: HeldRows | null = null;
  beforeEach(async () => {
    db = await openTestDatabase({ poolSize: 6 });
    t = await createTestEngine({
      db,
      flows: [parked],
      actions: [],
      config: { monitor: { unfinished_terminate_after_seconds: 60 }, sweeps: { transaction_timeout_ms: 1000 } },
    });
  });
  afterEach(async () => {
    await held?.rollback();
    held = null;
    await t?.close();
    await db?.close();
  });

  it('ends the others in the same pass, and the held one in the pass after it is let go', async () => {
    const p = await insertRun(db);
    const c = await insertRun(db, { parent: p, seq: 1 });
    const s1 = await insertRun(db, { parent: p, seq: 2 });
    const s2 = await insertRun(db, { parent: p, seq: 3 });
    const s3 = await insertRun(db, { parent: p, seq: 4 });
    const g = await insertRun(db, { parent: c, seq: 1 });
    t.clock.advance(1000);
    expect(await fenceOnly(t, db, p, reason)).toBe(5);
    t.clock.advance(65_000);
    held = await holdRuns(db.url!, [s2]);

    expect(await pass(t)).toBe(4);
    const first = await states(db, [c, g, s1, s2, s3]);
    expect(Object.values(first).map((r) => r.status)).toEqual([
      'Terminated',
      'Terminated',
      'Terminated',
      'Waiting',
      'Terminated',
    ]);
    expect(first[g]).toEqual({
      status: 'Terminated',
      message: `parent ${c} was terminated: parent ${p} was terminated: ${reason}`,
      finishedBy: [finishedByMonitor],
    });

    await held.rollback();
    held = null;
    expect(await pass(t)).toBe(1);
    const all = await states(db, [c, g, s1, s2, s3]);
    for (const id of [c, s1, s2, s3])
      expect(all[id]).toEqual({
        status: 'Terminated',
        message: `parent ${p} was terminated: ${reason}`,
        finishedBy: [finishedByMonitor],
      });
    expect(await pass(t)).toBe(0);
  });
});
