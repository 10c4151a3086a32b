import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import {
  judgeSiblings,
  runDueWakes,
  siblingParent,
  trackedDeps,
  siblingVariants,
  stopCommands,
} from './support/sibling-children.ts';

/**
 * Review 23. `await Promise.all([ctx.child(A), ctx.child(B), ...])`: the parent's replay has asked for A
 * and B (history checked, sequences taken, `session.cancelRequested` read as false) and their starts are
 * still out (each child's input check held at a gate) when the operator cancels the parent (the engine's
 * `cancel`, or the `run.cancel` repair). The cancel commits; then the two starts are let go.
 *
 * Guarantees (ADR 0006: children started with 'propagate' are cancelled with their parent; ADR 0093):
 * the parent ends Cancelled once, its booking compensated once; every child that was started ends
 * Cancelled and none of the children's actions runs after the cancellation; a child open when the parent
 * ended has its cancellation requested, and none is left open; each child is started at most once.
 */
const variants = siblingVariants;
const cancels = stopCommands('cancel');

describe(`cancel while the parent's sibling children are being started (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  for (const [how, cancel] of cancels)
    for (const [label, opts] of variants)
      it(`${how}, ${label}: the cancel commits before the starts of A and B`, async () => {
        const s = siblingParent(db, opts);
        const runId = await s.start();
        const a = s.hold('A');
        const b = s.hold('B');
        const r1 = trackedDeps(db, s.e.runtime);
        const live = executeRun(r1.deps, runId);
        await Promise.all([a.reached, b.reached]);
        // With C (no input check) R1 parks on C while A's and B's starts are held: its park is waited for
        // (quiet alone can fall between C's start and the park's transaction, and the repair, drafted
        // against Running, then meets Waiting: seen in CI).
        if (opts.children === 3) expect(await live).toBe('parked');
        // What R1 began has settled: the cancel is drafted against the run's state as it stays until the
        // starts are let go.
        await r1.quiet();

        await cancel(s.e, db, runId);
        r1.mark();
        a.release();
        b.release();
        await live;
        await r1.quiet();

        const { openAtParentEnd } = await runDueWakes(db, s.e, runId);
        const judged = await judgeSiblings(db, runId);
        // A child whose start R1 dropped (it parked first) is asked for again by the replay that delivers
        // the cancellation: at that child's position the cancellation is delivered instead (no child run),
        // and a later one of the same Promise.all is started cancelled (ADR 0093). Each child that exists
        // is started once and ends Cancelled.
        const seqs = judged.children.map((c) => c.seq);
        expect({
          parent: judged.parent.status,
          ends: judged.parent.ends,
          afterTheEnd: judged.parent.afterTheEnd,
          compensations: judged.parent.compensations,
          runsPerSeq: judged.runsPerSeq,
          children: judged.children.map((c) => [c.seq, c.status, c.cancelRequested, c.ends]),
          // The parent's code may end (its Promise.all rejected at the delivery) while a child started
          // cancelled is still on its way to Cancelled: open at the parent's end only with its cancel
          // requested (ADR 0093), never left running.
          openAtParentEndUncancelled: (openAtParentEnd ?? []).filter(
            (q) => !judged.children.some((c) => c.seq === q && c.cancelRequested),
          ),
          orphans: judged.orphans,
          childrensWork: [s.ran['work-a'] ?? 0, s.ran['work-b'] ?? 0, s.ran['work-c'] ?? 0],
        }).toEqual({
          parent: 'Cancelled',
          ends: 1,
          afterTheEnd: [],
          compensations: [[expect.stringMatching(/-unbook$/), 'Completed', 1]],
          runsPerSeq: Object.fromEntries(seqs.map((q) => [String(q), 1] as const)),
          children: seqs.map((q) => [q, 'Cancelled', true, 1]),
          openAtParentEndUncancelled: [],
          orphans: [],
          childrensWork: [0, 0, 0],
        });
      });
});
