import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { judgeSiblings, replayChild, runDueWakes, trackedDeps } from '../review23/support/sibling-children.ts';
import { anomaliesOf, lateParent, type SideEnd } from './support/late-flows.ts';

/**
 * Review 24 (ADR 0093, decision 1). `await Promise.all([ctx.child(A), ctx.action(side)])`: the first replay
 * (R1) parks on A while `side` runs (held at a gate). A finishes and wakes the parent; the parent's next
 * replay (R2) meets `side` Running under R1's live claim and parks on it ("running on another worker").
 * Only then does `side` end, in R1, which has parked: a completion goes through ReplaySession.buffer (written
 * at once with a wake), a failure through R1's session.tx.
 *
 * Guarantees: the step's outcome is recorded once; the run is not left waiting for ever on a step whose
 * action finished (a wake is due, and following the wakes ends the run once); nothing after its end.
 */
describe(`a late outcome after a newer replay parked on its step (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  const expected: Record<SideEnd, { parent: string; side: string; attempts: number; ran: number }> = {
    completes: { parent: 'Completed', side: 'Completed', attempts: 1, ran: 1 },
    'fails-for-good': { parent: 'Failed', side: 'Errored', attempts: 1, ran: 1 },
    'fails-then-retries': { parent: 'Completed', side: 'Completed', attempts: 2, ran: 2 },
  };

  for (const sideEnds of ['completes', 'fails-for-good', 'fails-then-retries'] as const)
    it(`side ${sideEnds} after R2 parked on it`, async () => {
      const s = lateParent(db, { shape: 'child+step', sideEnds });
      const runId = await s.start();
      const side = s.holdAction('side');
      const r1 = trackedDeps(db, s.e.runtime);
      const live = executeRun(r1.deps, runId);
      await side.reached;
      expect(await live).toBe('parked');
      await r1.quiet();

      expect(await replayChild(db, s.e, runId, 2)).toBe('Completed');
      // R2: A is done, `side` is Running under R1's claim: R2 parks on it.
      await runDueWakes(db, s.e, runId);
      const mid = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      expect([mid.status, mid.finished_at]).toEqual([expect.not.stringMatching(/Completed|Failed/), null]);

      r1.mark();
      side.release();
      await r1.quiet();
      const sideRow = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 3 } });
      const wakes = await db.prisma.job.count({ where: { run_id: runId } });
      // The step's action finished: something must replay the run (a wake now, or the retry's wake).
      const woken = wakes > 0;

      s.clock.advance(5_000);
      await runDueWakes(db, s.e, runId);
      const judged = await judgeSiblings(db, runId);
      const steps = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
      const exp = expected[sideEnds];
      expect({
        afterLateOutcome: { sideStatus: sideRow.status, woken },
        parent: [judged.parent.status, judged.parent.ends, judged.parent.afterTheEnd],
        duplicates: judged.parent.duplicateStepOutcomes,
        side: steps.filter((r) => r.sequence === 3).map((r) => [r.status, r.attempts]),
        ranSide: s.ran.side,
        // R2 meeting R1's live claim journals claim_lost; nothing else is expected.
        anomalies: (await anomaliesOf(db, runId)).filter((a) => !a.startsWith('claim_lost#')),
        parentWaitingFor: (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).waiting_for,
      }).toEqual({
        afterLateOutcome: {
          sideStatus: sideEnds === 'completes' ? 'Completed' : sideEnds === 'fails-for-good' ? 'Errored' : 'Failed',
          woken: true,
        },
        parent: [exp.parent, 1, []],
        duplicates: [],
        side: [[exp.side, exp.attempts]],
        ranSide: exp.ran,
        anomalies: [],
        parentWaitingFor: null,
      });
    });
});
