import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import {
  judgeSiblings,
  replayChild,
  runDueWakes,
  siblingParent,
  trackedDeps,
} from '../review23/support/sibling-children.ts';

/**
 * Review 24 (ADR 0093, decision 1), a compensation's outcome. Review 23's parent:
 * `try { await Promise.all([ctx.child(A), ctx.child(B)]) } catch { await ctx.compensate(); throw }` after a
 * booking. A fails; B is started and open. The parent's replay (R2) meets A's failure and compensates: the
 * booking's compensation (unbook) is held at a gate while R2 goes on; R2 may park on B meanwhile (ADR 0093:
 * the replay may park on the open sibling while the code compensates), and then unbook ends in a replay
 * that has parked.
 *
 * Guarantees: unbook's outcome is recorded once (Completed) and unbook ran once; the parent ends once,
 * Compensated, nothing after its end; B either finished before the parent's end or was cancelled by it;
 * nothing is left open.
 */
describe(`a compensation that finishes after its replay parked (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('unbook is held while R2 compensates beside the open sibling B', async () => {
    const s = siblingParent(db, { children: 2, firstFails: true });
    const runId = await s.start();
    const r1 = trackedDeps(db, s.e.runtime);
    expect(await executeRun(r1.deps, runId)).toBe('parked');
    await r1.quiet();
    expect(await replayChild(db, s.e, runId, s.seqs.A)).toBe('Failed');

    const unbook = s.holdAction('unbook');
    const r2 = trackedDeps(db, s.e.runtime);
    let r2Done: string | null = null;
    const live = executeRun(r2.deps, runId).then((r) => (r2Done = r));
    await unbook.reached;
    await r2.quiet();
    const parkedFirst = r2Done === 'parked';
    r2.mark();
    unbook.release();
    await live;
    await r2.quiet();
    const unbookRow = await db.prisma.compensationRun.findFirstOrThrow({ where: { run_id: runId } });
    const afterUnbook = unbookRow.status;

    await replayChild(db, s.e, runId, s.seqs.B);
    const { openAtParentEnd } = await runDueWakes(db, s.e, runId);
    const judged = await judgeSiblings(db, runId);
    const b = judged.children.find((c) => c.seq === s.seqs.B);
    expect({
      afterUnbook,
      parent: [judged.parent.status, judged.parent.ends, judged.parent.afterTheEnd],
      compensations: judged.parent.compensations,
      unbookRan: s.ran.unbook,
      orphans: judged.orphans,
      b: openAtParentEnd?.includes(s.seqs.B) ? [b?.status, b?.cancelRequested] : [b?.status],
    }).toEqual({
      afterUnbook: 'Completed',
      parent: ['Compensated', 1, []],
      compensations: [[expect.stringMatching(/-unbook$/), 'Completed', 1]],
      unbookRan: 1,
      orphans: [],
      b: openAtParentEnd?.includes(s.seqs.B) ? ['Cancelled', true] : ['Completed'],
    });
    console.log(`review24 late compensation: R2 parked before unbook ended: ${parkedFirst}`);
  });
});
