import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { judgeSiblings, replayChild, runDueWakes, trackedDeps } from '../review23/support/sibling-children.ts';
import { anomaliesOf, lateParent } from './support/late-flows.ts';

/**
 * Review 24 (ADR 0093, decision 1, with ADR 0010's reclaim). `Promise.all([ctx.child(A), ctx.action(side)])`:
 * the first replay (R1) parks on A while `side` runs (attempt 1, held at a gate). The operator reclaims the
 * step (engine.reclaimStep: its owner counts as gone), and the replay the reclaim wakes (R2) claims `side`
 * again (attempt 2), runs it and parks on A (its outcome carried by the park, or written late with a wake). Then attempt 1 ends in R1, which has parked:
 * its late outcome (a completion, or a failure) meets a row that changed hands.
 *
 * Guarantees: the step's outcome is recorded once (attempt 2's), never overwritten by attempt 1's; attempt 1's
 * outcome is journaled (outcome_rejected), not dropped silently; the parent ends once, Completed.
 */
describe(`a late outcome racing a reclaim of its step (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  for (const lateEnds of ['completes', 'fails-for-good'] as const)
    it(`attempt 1 ${lateEnds} after attempt 2 was recorded`, async () => {
      const s = lateParent(db, { shape: 'child+step', sideEnds: 'completes' });
      const runId = await s.start();
      const side = s.holdAction('side');
      const r1 = trackedDeps(db, s.e.runtime);
      const live = executeRun(r1.deps, runId);
      await side.reached;
      expect(await live).toBe('parked');
      await r1.quiet();

      const row = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 3 } });
      // R1's worker counts as gone (stopped), as after a crash its replay outlived.
      const workerId = s.e.runtime.workerId;
      await db.prisma.worker.upsert({
        where: { id: workerId },
        create: { id: workerId, stopped_at: new Date() },
        update: { stopped_at: new Date() },
      });
      expect(await s.e.reclaimStep(runId, { stepId: row.id })).toEqual({ reclaimed: true, stepId: row.id });
      // R2, woken by the reclaim: claims side (attempt 2), runs it, parks on A with the outcome.
      // R2 parks on A, and its claim of `side` (held at a gate until it is under way) goes on either way.
      await db.prisma.job.deleteMany({ where: { run_id: runId } });
      const claim = s.holdClaim('side');
      const r2 = trackedDeps(db, s.e.runtime);
      const live2 = executeRun(r2.deps, runId);
      await claim.reached;
      claim.release();
      expect(await live2).toBe('parked');
      await r2.quiet();
      const afterR2 = await db.prisma.actionRun.findUniqueOrThrow({ where: { id: row.id } });
      expect([afterR2.status, afterR2.attempts]).toEqual(['Completed', 2]);

      if (lateEnds === 'fails-for-good') s.failSideNext();
      r1.mark();
      side.release();
      await r1.quiet();
      const afterLate = await db.prisma.actionRun.findUniqueOrThrow({ where: { id: row.id } });

      expect(await replayChild(db, s.e, runId, 2)).toBe('Completed');
      await runDueWakes(db, s.e, runId);
      const judged = await judgeSiblings(db, runId);
      expect({
        afterLate: [afterLate.status, afterLate.attempts, afterLate.output],
        parent: [judged.parent.status, judged.parent.ends, judged.parent.afterTheEnd],
        duplicates: judged.parent.duplicateStepOutcomes,
        output: judged.parent.output,
        ranSide: s.ran.side,
        anomalies: (await anomaliesOf(db, runId)).filter((a) => !a.startsWith('claim_lost#')),
      }).toEqual({
        afterLate: ['Completed', 2, 'side:null'],
        parent: ['Completed', 1, []],
        duplicates: [],
        output: ['work-a:"a"', 'side:null'],
        ranSide: 2,
        anomalies: ['outcome_rejected#3'],
      });
    });
});
