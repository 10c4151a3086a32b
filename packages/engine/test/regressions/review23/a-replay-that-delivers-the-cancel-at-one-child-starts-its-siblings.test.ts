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
 * (R2): A and B are not recorded, and the cancellation is delivered at A (a `cancel` row at step 2), or,
 * where R2 parks on C first, at C's cancelled end.
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

  it("the cancel is delivered (at A, or at C's cancelled end); no child is started uncancelled", async () => {
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
    // first step not recorded), unless its wait for C parks it first (C needs no input check). Then C,
    // cancelled with its parent, ends Cancelled, and the replay it wakes meets that end at C first (again
    // no input check): the cancellation reaches the code there (ADR 0006), and A and B, asked for in the
    // same Promise.all before the code could see it, may be started, each cancelled by its own start
    // (ADR 0093). Seen in CI: A started cancelled, no delivery row at 2.
    await executeRun(s.e.runtime, runId);
    const { openAtParentEnd } = await runDueWakes(db, s.e, runId);
    const end = await recordOf(db, runId);
    const kids = await childrenOf(db, runId);
    const deliveredAt2 = end.names.includes('run.cancel_delivered#2');
    const positions = kids.map((c) => c.parent_sequence);
    expect({
      // Where the cancellation was delivered at A's position, no child was started there as well.
      childAtADeliveredPosition: deliveredAt2 && positions.includes(2),
      onePerPosition: new Set(positions).size === positions.length,
      cHasItsChild: positions.includes(4),
      children: kids.map((c) => [c.parent_sequence, c.cancel_requested_at !== null, c.status]),
      childrensWork: [s.ran['work-a'] ?? 0, s.ran['work-b'] ?? 0, s.ran['work-c'] ?? 0],
      parent: [end.run.status, end.ends, end.afterTheEnd],
      compensations: end.compensations,
      // A child open at the parent's end is one started cancelled and still on its way (ADR 0093).
      openAtParentEndUncancelled: (openAtParentEnd ?? []).filter(
        (q) => !kids.some((c) => c.parent_sequence === q && c.cancel_requested_at !== null),
      ),
    }).toEqual({
      childAtADeliveredPosition: false,
      onePerPosition: true,
      cHasItsChild: true,
      // Every child the parent has (C, and A or B if a replay started them) is cancel-requested and Cancelled.
      children: kids.map((c) => [c.parent_sequence, true, 'Cancelled']),
      childrensWork: [0, 0, 0],
      parent: ['Cancelled', 1, []],
      compensations: [[expect.stringMatching(/-unbook$/), 'Completed', 1]],
      openAtParentEndUncancelled: [],
    });
  });
});
