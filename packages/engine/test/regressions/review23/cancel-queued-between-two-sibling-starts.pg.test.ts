import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { holdRuns, waitForWaiters } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { lockWaiters } from '../review21/lock-waiters.ts';
import { judgeSiblings, runDueWakes, siblingParent, trackedDeps } from './support/sibling-children.ts';

/**
 * Review 23. `await Promise.all([ctx.child(A), ctx.child(B)])` on real PostgreSQL: the two starts are
 * transactions of the same replay (R1), each taking the parent's row first. Here they queue on that row
 * (held by a connection of the test's own) with the operator's cancel between them: A's start first, then
 * the cancel, then B's start. So A's start commits and the cancel commits and reaches A. B's start, whose
 * replay read the parent as not cancelled, then finds the cancellation under the parent's lock: its replay
 * is stale, and it writes nothing (ADR 0093); a later replay delivers the cancellation at B's position.
 *
 * Guarantees (ADR 0006: children started with 'propagate' are cancelled with their parent): A ends
 * Cancelled, B is never started, and neither child's action runs; the parent ends Cancelled once with its
 * booking compensated once; no child is left open when the parent has ended.
 */
describe("cancel queued between two sibling children's starts on the parent's row (real PostgreSQL)", () => {
  let db: Database & { url?: string };
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  // The engine's cancel only: a run.cancel repair drafted against the run's state before A's start meets
  // a state that moved on under the queue, and is refused as designed (ADR 0016).
  it("engine.cancel: A's start, then the cancel, then B's start", async () => {
    if (!db.url) throw new Error('this test needs the PostgreSQL project');
    const s = siblingParent(db, { children: 2 });
    const runId = await s.start();
    const a = s.hold('A');
    const b = s.hold('B');
    const r1 = trackedDeps(db, s.e.runtime);
    const live = executeRun(r1.deps, runId);
    await Promise.all([a.reached, b.reached]);

    const holder = await holdRuns(db.url, [runId]);
    a.release();
    await waitForWaiters(db, holder.pid, 1);
    const cancelling = s.e.cancel(runId, { reason: 'review23: stop', cleanupSeconds: 60 });
    // The cancel's own statement in the queue, not just a second waiter: on a loaded machine another
    // statement of the live replay can queue on the parent's row first, and B would then queue ahead of
    // the cancel (seen once in a full run beside a helper's tests).
    await waitFor('the cancel to queue on the parent', async () =>
      (await lockWaiters(db, 1)).some((w) => w.query.includes('cancel_deadline_at')) ? true : undefined,
    );
    r1.mark();
    b.release();
    await lockWaiters(db, 3);
    await holder.commit();
    await cancelling;
    await live;
    await r1.quiet();

    const { openAtParentEnd } = await runDueWakes(db, s.e, runId);
    const judged = await judgeSiblings(db, runId);
    expect({
      parent: [judged.parent.status, judged.parent.ends, judged.parent.afterTheEnd],
      compensations: judged.parent.compensations,
      runsPerSeq: judged.runsPerSeq,
      children: judged.children.map((c) => [c.seq, c.status, c.cancelRequested]),
      openAtParentEnd,
      orphans: judged.orphans,
      childrensWork: [s.ran['work-a'] ?? 0, s.ran['work-b'] ?? 0],
    }).toEqual({
      parent: ['Cancelled', 1, []],
      compensations: [[expect.stringMatching(/-unbook$/), 'Completed', 1]],
      runsPerSeq: { 2: 1 },
      children: [[2, 'Cancelled', true]],
      openAtParentEnd: [],
      orphans: [],
      childrensWork: [0, 0],
    });
  });
});
