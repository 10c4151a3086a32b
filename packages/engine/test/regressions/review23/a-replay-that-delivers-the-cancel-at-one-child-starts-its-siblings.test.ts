import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { recordOf } from '../review20/record.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { childrenOf, runDueWakes, siblingParent, trackedDeps } from './support/sibling-children.ts';

/**
 * Review 23. `await Promise.all([ctx.child(A), ctx.child(B), ctx.child(C)])`: the parent's first replay
 * (R1) parks as soon as C waits, while the starts of A and B are out (their input checks held); once it
 * has parked it drops them. The operator cancels the parent. The cancellation's wake replays the parent
 * (R2): A and B are not recorded, and the cancellation is delivered at A (a `cancel` row at step 2).
 *
 * Guarantees (ADR 0006, ADR 0093): a cancelled parent starts no new child, or only one that is cancelled
 * with it: a child started after `run.cancel_delivered` (B, asked for in the same Promise.all) is
 * cancel-requested by its own start, every child of the parent is cancel-requested, and no child's
 * action runs; the parent then ends Cancelled once with its booking compensated once.
 */
describe(`a replay that delivers the cancellation at one child of a Promise.all (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('R2 delivers the cancel at A, and B (not recorded either) is not started uncancelled', async () => {
    const s = siblingParent(db, { children: 3 });
    const runId = await s.start();
    const a = s.hold('A');
    const b = s.hold('B');
    const r1 = trackedDeps(db, s.e.runtime);
    expect(await executeRun(r1.deps, runId)).toBe('parked');
    await Promise.all([a.reached, b.reached]);
    await r1.quiet();
    expect((await childrenOf(db, runId)).map((c) => c.parent_sequence)).toEqual([4]);

    await s.e.cancel(runId, { reason: 'review23: stop', cleanupSeconds: 60 });
    // R1 has parked: the starts it dropped write nothing when let go.
    r1.mark();
    a.release();
    b.release();
    expect(await r1.quiet()).toBe(0);

    // R2, the cancellation's wake, then every wake after it. R2 delivers the cancellation at A (its
    // first step not recorded), unless its wait for C parks it first (C needs no input check); then a
    // later replay delivers it there, once C has ended Cancelled.
    await executeRun(s.e.runtime, runId);
    const { openAtParentEnd } = await runDueWakes(db, s.e, runId);
    const end = await recordOf(db, runId);
    const kids = await childrenOf(db, runId);
    const delivered = end.names.indexOf('run.cancel_delivered#2');
    // B may be started after the delivery (the code asked for it in the same Promise.all), but only
    // cancelled in its start's own transaction (ADR 0093): every child the parent has is cancel-requested.
    const startedAfterDelivery = end.names.slice(delivered + 1).filter((n) => n.startsWith('child.started'));
    expect({
      deliveredAt2: delivered >= 0,
      startedAfterDelivery: startedAfterDelivery.filter((n) => n !== 'child.started#3'),
      children: kids.map((c) => [c.parent_sequence, c.cancel_requested_at !== null, c.status]),
      childrensWork: [s.ran['work-a'] ?? 0, s.ran['work-b'] ?? 0, s.ran['work-c'] ?? 0],
      parent: [end.run.status, end.ends, end.afterTheEnd],
      compensations: end.compensations,
      // A child open at the parent's end is one started cancelled and still on its way (ADR 0093).
      openAtParentEndUncancelled: (openAtParentEnd ?? []).filter(
        (q) => !kids.some((c) => c.parent_sequence === q && c.cancel_requested_at !== null),
      ),
    }).toEqual({
      deliveredAt2: true,
      startedAfterDelivery: [],
      // C, and B if a replay started it (before or after the delivery at A, whichever committed first),
      // each cancel-requested and Cancelled.
      children: [
        ...(kids.some((c) => c.parent_sequence === 3) ? [[3, true, 'Cancelled']] : []),
        [4, true, 'Cancelled'],
      ],
      childrensWork: [0, 0, 0],
      parent: ['Cancelled', 1, []],
      compensations: [[expect.stringMatching(/-unbook$/), 'Completed', 1]],
      openAtParentEndUncancelled: [],
    });
  });
});
