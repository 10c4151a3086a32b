import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { judgeSiblings, runDueWakes, trackedDeps } from '../review23/support/sibling-children.ts';
import { anomaliesOf, lateParent } from './support/late-flows.ts';

/**
 * Review 24 (ADR 0093, decision 1, and its "Not changed"). A step whose action is still running when its
 * run ends, and that finishes afterwards:
 * - `Promise.all([ctx.child(A), ctx.action(side)])`: the first replay (R1) parks on A while `side` runs, and
 *   the run is terminated (engine.terminate) before `side` ends, in R1 (which has parked);
 * - a flow that starts `side` without awaiting it and returns: the replay ends the run Completed while `side`
 *   runs.
 *
 * Guarantees: nothing is recorded on the run after its terminal event; the step's late outcome, which the
 * fence must refuse, is journaled (write_refused) — never dropped silently, whether it is a completion or a
 * failure; the run ends once.
 */
describe(`a late outcome on an ended run is journaled (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  for (const sideEnds of ['completes', 'fails-for-good', 'fails-then-retries'] as const)
    it(`terminated while side runs; side ${sideEnds} in the parked replay`, async () => {
      const s = lateParent(db, { shape: 'child+step', sideEnds });
      const runId = await s.start();
      const side = s.holdAction('side');
      const r1 = trackedDeps(db, s.e.runtime);
      const live = executeRun(r1.deps, runId);
      await side.reached;
      expect(await live).toBe('parked');
      await r1.quiet();
      expect(await s.e.terminate(runId, { reason: 'review24' })).toEqual({ terminated: true });

      r1.mark();
      side.release();
      await r1.quiet();
      await runDueWakes(db, s.e, runId);
      const judged = await judgeSiblings(db, runId);
      const sideRow = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 3 } });
      expect({
        parent: [judged.parent.status, judged.parent.ends, judged.parent.afterTheEnd],
        side: sideRow.status,
        anomalies: await anomaliesOf(db, runId),
      }).toEqual({
        parent: ['Terminated', 1, []],
        side: 'Running',
        anomalies: ['write_refused#3'],
      });
    });

  for (const sideEnds of ['completes', 'fails-for-good'] as const)
    it(`an un-awaited step that ${sideEnds} after the run ended Completed`, async () => {
      const s = lateParent(db, { shape: 'unawaited-step', sideEnds });
      const runId = await s.start();
      const side = s.holdAction('side');
      const r1 = trackedDeps(db, s.e.runtime);
      expect(await executeRun(r1.deps, runId)).toBe('finished');
      await side.reached;

      r1.mark();
      side.release();
      await r1.quiet();
      await runDueWakes(db, s.e, runId);
      const judged = await judgeSiblings(db, runId);
      const sideRow = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 2 } });
      expect({
        parent: [judged.parent.status, judged.parent.ends, judged.parent.afterTheEnd],
        side: sideRow.status,
        ranSide: s.ran.side,
        anomalies: await anomaliesOf(db, runId),
      }).toEqual({
        parent: ['Completed', 1, []],
        side: 'Running',
        ranSide: 1,
        // ADR 0093: "refused by its fence (write_refused) and stays Running on the ended run".
        anomalies: ['write_refused#2'],
      });
    });
});
