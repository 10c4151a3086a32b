import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { judgeSiblings, replayChild, runDueWakes, siblingParent, trackedDeps } from './support/sibling-children.ts';

/**
 * Review 23. `await Promise.all([ctx.child(A), ctx.child(B), ctx.action(side)])`: the parent's replay
 * (R1) parks as soon as A waits, while `side` is still executing (held at a gate). Then `side` finishes:
 * its outcome is a sequential step's, which the replay buffers for its next transaction, but R1 has
 * already parked and has no next transaction.
 *
 * Guarantees: the step that ran is recorded once (ADR 0010: a finished step's outcome is written); the
 * parent is not left waiting on a step "running on another worker" that is done; the parent finishes once,
 * Completed, with every child and the step; every action runs once.
 */
describe(`a step of the Promise.all that finishes after the replay parked on a child (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('the step finishes once R1 has parked on A; A and B finish; the parent is woken', async () => {
    const s = siblingParent(db, { children: 2, withStep: true });
    const runId = await s.start();
    const side = s.holdAction('side');
    const r1 = trackedDeps(db, s.e.runtime);
    const live = executeRun(r1.deps, runId);
    await side.reached;
    expect(await live).toBe('parked');
    // Both children exist (R1's starts have settled) before the step is let go.
    await r1.quiet();
    r1.mark();
    side.release();
    await r1.quiet();
    expect(s.ran.side).toBe(1);

    expect(await replayChild(db, s.e, runId, s.seqs.A)).toBe('Completed');
    expect(await replayChild(db, s.e, runId, s.seqs.B)).toBe('Completed');
    await runDueWakes(db, s.e, runId);

    const judged = await judgeSiblings(db, runId);
    const steps = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    const parent = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect({
      steps: steps.map((r) => [r.sequence, r.kind, r.status]),
      parent: [judged.parent.status, judged.parent.ends, parent.waiting_for],
      output: judged.parent.output,
      ran: s.ran,
    }).toEqual({
      steps: [
        [1, 'action', 'Completed'],
        [2, 'child', 'Completed'],
        [3, 'child', 'Completed'],
        [4, 'action', 'Completed'],
      ],
      parent: ['Completed', 1, null],
      output: ['work-a:"a"', 'work-b:"b"', 'side:null'],
      ran: { book: 1, side: 1, 'work-a': 1, 'work-b': 1 },
    });
  });
});
