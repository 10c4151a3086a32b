import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { finishedByMonitor } from '../../../src/api/sweep-unfinished-terminates.ts';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { holdRuns, waitersOn, type HeldRows } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { fenceOnly, insertRun, parked, pass, states, statuses } from './support/tree.ts';

const reason = 'stopped by ops';

/**
 * Review 67, ADR 0140 §2: "The runs are locked FOR UPDATE SKIP LOCKED: a run another session holds is passed
 * over until the next pass […]. One held run does not stop the pass (review 58)."
 *
 * P → C, S1, S2, S3 (all 'propagate'), C → G1, G2. P's terminate makes its first commit (fence) and stops.
 * Another session holds C's row (an operator's psql left in a transaction, a hung host transaction: ADR 0137).
 * Past the grace, one monitor pass runs with `sweeps.transaction_timeout_ms` 1 s.
 *
 * The walk lists C, S1–S3 and G1, G2 in one batch; C is skipped (SKIP LOCKED), but ending G1 settles its
 * parent's step (`settleParentStep`: `for no key update` of C, no SKIP LOCKED), which waits on the holder until
 * the batch's statement timeout. The batch is halved and retried, each time waiting again, until the pass budget
 * or a batch of one (C alone, skipped). So S1–S3, which nobody holds, are not ended in that pass (nor in any pass
 * while C is held), and the pass spends its budget waiting. The pass then stops on its budget before the next
 * parent: another tree (Q → T1, T2, its terminate stopped a second later, nothing of it held) is not reached
 * either. Parents come oldest fence first, so while C is held no stopped terminate behind P's is finished.
 * And C is never noted as held (the batches that would note it roll back), so a C held for good is never
 * journaled `run_held`.
 */
describe('a fenced run held by another session, with fenced children of its own (postgres)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let held: HeldRows | null = null;
  beforeEach(async () => {
    db = await openTestDatabase({ poolSize: 6 });
    t = await createTestEngine({
      db,
      flows: [parked],
      actions: [],
      config: {
        monitor: { unfinished_terminate_after_seconds: 60 },
        sweeps: { transaction_timeout_ms: 1000 },
      },
    });
  });
  afterEach(async () => {
    await held?.rollback();
    held = null;
    await t?.close();
    await db?.close();
  });

  async function shape() {
    const p = await insertRun(db);
    const c = await insertRun(db, { parent: p, seq: 1 });
    const s = [await insertRun(db, { parent: p, seq: 2 }), await insertRun(db, { parent: p, seq: 3 })];
    s.push(await insertRun(db, { parent: p, seq: 4 }));
    const g = [await insertRun(db, { parent: c, seq: 1 }), await insertRun(db, { parent: c, seq: 2 })];
    t.clock.advance(1000);
    expect(await fenceOnly(t, db, p, reason)).toBe(6);
    // Another tree, nothing of it held, whose terminate stopped a second later: Q → T1, T2.
    const q = await insertRun(db);
    const other = [await insertRun(db, { parent: q, seq: 1 }), await insertRun(db, { parent: q, seq: 2 })];
    t.clock.advance(1000);
    expect(await fenceOnly(t, db, q, reason)).toBe(2);
    t.clock.advance(65_000);
    return { p, c, s, g, other };
  }

  it('the held run’s siblings, which nobody holds, are ended in the pass that passes it over', async () => {
    const { p, c, s, g, other } = await shape();
    held = await holdRuns(db.url!, [c]);

    const started = performance.now();
    const ended = await pass(t);
    const tookMs = Math.round(performance.now() - started);
    const seen = await states(db, s);
    const otherTree = await statuses(db, other);
    // Nothing of the pass waits on the holder now (fixed: a run under a held one is left with it in its batch).
    const waiting = await waitersOn(db, held.pid);

    // ADR 0140 §2: C (held) passed over; S1–S3 and the other tree's T1, T2 ended in this pass.
    expect({
      ended,
      siblings: Object.values(seen).map((r) => r.status),
      otherTree,
      tookMs: tookMs < 3000 ? 'short' : tookMs,
      waiting: waiting.map((w) => w.query),
    }).toEqual({
      ended: 5,
      siblings: ['Terminated', 'Terminated', 'Terminated'],
      otherTree: ['Terminated', 'Terminated'],
      tookMs: 'short',
      waiting: [],
    });
    for (const id of s)
      expect(seen[id]).toEqual({
        status: 'Terminated',
        message: `parent ${p} was terminated: ${reason}`,
        finishedBy: [finishedByMonitor],
      });

    // Let go: the next pass ends C and its children.
    await held.rollback();
    held = null;
    expect(await pass(t)).toBe(3);
    expect(await statuses(db, [c, ...g])).toEqual(['Terminated', 'Terminated', 'Terminated']);
  });

  it('C, held across passes for over a minute, is journaled run_held by the terminate finisher (ADR 0137)', async () => {
    const { c } = await shape();
    held = await holdRuns(db.url!, [c]);
    // Sightings no more than a minute apart (ADR 0137's first addendum): passes at 0 s, 30 s and 61 s.
    await pass(t);
    t.clock.advance(30_000);
    await pass(t);
    t.clock.advance(31_000);
    await pass(t);
    const journal = await db.prisma.anomalyLog.findMany({ where: { run_id: c, code: 'run_held' } });
    // ADR 0140 §2: a held run is "noted for ADR 0137's run_held journal under the sweep name terminate finisher".
    expect(journal.map((j) => (j.details as { sweep?: unknown } | null)?.sweep ?? null)).toEqual([
      'terminate finisher',
    ]);
  });
});
