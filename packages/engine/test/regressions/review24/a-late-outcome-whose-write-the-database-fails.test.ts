import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { failingDeps } from '../../support/failing-deps.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { judgeSiblings, replayChild, runDueWakes, trackedDeps } from '../review23/support/sibling-children.ts';
import { bareEngine } from '../harness.ts';
import { lateParent } from './support/late-flows.ts';

/**
 * Review 24 (ADR 0093, decision 1, with ADR 0010's outage path). `Promise.all([ctx.child(A), ctx.action(side)])`:
 * the first replay (R1) parks on A while `side` runs; the database then fails every transaction, and `side`
 * ends (completes, or fails for good) in R1, which has parked. The late write fails through its bounded retry;
 * the engine's backlog (heldOutcomes) keeps it; the database answers again and the backlog is retried.
 *
 * Guarantees: the outcome is not lost (it is recorded once, after the outage), the run is woken for it, and
 * it ends once with it.
 */
describe(`a late outcome whose write the database fails (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  for (const sideEnds of ['completes', 'fails-for-good'] as const)
    it(`side ${sideEnds} during the outage`, async () => {
      const s = lateParent(db, { shape: 'child+step', sideEnds });
      // The late write's own retry budget is short, so the outcome reaches the backlog.
      const fast = bareEngine(db, {
        clock: s.clock,
        flows: [...s.e.runtime.registry.flows.values()],
        actions: [...s.e.runtime.registry.actions.values()],
        config: { worker: { outcome_retry: { max_attempts: 2, base_delay_ms: 1, max_delay_ms: 1 } } },
        faults: s.e.runtime.faults,
      });
      const runId = await s.start();
      const side = s.holdAction('side');
      const failing = failingDeps(fast.runtime);
      const r1 = trackedDeps(db, failing.deps);
      const live = executeRun(r1.deps, runId);
      await side.reached;
      expect(await live).toBe('parked');
      await r1.quiet();

      failing.state.failing = true;
      side.release();
      await waitFor('the late outcome to reach the backlog', async () =>
        fast.runtime.heldOutcomes.size > 0 ? true : undefined,
      );
      const duringOutage = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 3 } });
      failing.state.failing = false;
      await fast.runtime.heldOutcomes.retry();
      const afterRetry = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 3 } });
      const wakes = await db.prisma.job.count({ where: { run_id: runId } });

      expect(await replayChild(db, s.e, runId, 2)).toBe('Completed');
      await runDueWakes(db, s.e, runId);
      const judged = await judgeSiblings(db, runId);
      expect({
        duringOutage: duringOutage.status,
        afterRetry: afterRetry.status,
        held: fast.runtime.heldOutcomes.size,
        woken: wakes > 0,
        refused: failing.state.refused >= 1,
        parent: [
          judged.parent.status,
          judged.parent.ends,
          judged.parent.afterTheEnd,
          judged.parent.duplicateStepOutcomes,
        ],
        ranSide: s.ran.side,
      }).toEqual({
        duringOutage: 'Running',
        afterRetry: sideEnds === 'completes' ? 'Completed' : 'Errored',
        held: 0,
        woken: true,
        refused: true,
        parent: [sideEnds === 'completes' ? 'Completed' : 'Failed', 1, [], []],
        ranSide: 1,
      });
    });
});
