import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine } from '../harness.ts';
import { stalePlanFlow } from '../review18/stale-plan-flow.ts';
import { driveToEnd, recordOf } from './record.ts';

/**
 * Review 20. Review 18's stale rollback plan, for the monitor's own expiry: sweepExpiredRuns plans the
 * rollback of a run past its expiresInSeconds with a replay that writes nothing, OUTSIDE its
 * transaction, then startExpiryInTransaction writes run.expiry_started (and emits run.expired) with
 * that plan. ADR 0085 made run.expire / run.cancel check the plan again under the lock
 * (assertRollbackCurrent); the monitor's path has no such check. The worker holding the run back to
 * back records step 2 (with undo-b) between the plan and the transaction.
 *
 * Progress, not time: the planning replay (the flow's second invocation) waits at its start until the
 * worker's step 2 has committed and its step 3 is running.
 */
describe(`the monitor's expiry plans its rollback before its transaction (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('run.expiry_started and run.expired name the compensations the expiry runs', async () => {
    const clock = new TestClock();
    const { flow, actions, plan, two, three, undone } = stalePlanFlow('review20-mexp');
    const e = bareEngine(db, {
      flows: [flow],
      actions,
      clock,
      config: { monitor: { expiration: { plan_timeout_ms: 60_000 } } },
    });
    const emitted: string[][] = [];
    e.events.on('run.expired', (ev) => {
      emitted.push(ev.compensations.map((x) => x.name));
    });
    const { runId } = await e.startFlow(flow, null, { expiresInSeconds: 60 });
    const live = executeRun(e.runtime, runId);
    await two.reached.promise;

    clock.advance(120_000);
    const sweep = e.sweepExpiredRuns();
    // The sweep's planning replay has read the record (step 2 Running) and waits.
    await plan.reached.promise;
    two.release.open();
    await three.reached.promise;
    await waitFor('step 2 to be recorded', async () =>
      (await db.prisma.actionRun.findFirst({ where: { run_id: runId, sequence: 2 } }))?.status === 'Completed'
        ? true
        : undefined,
    );
    plan.release.open();
    expect((await sweep).expired).toEqual([runId]);
    three.release.open();
    await live;
    await db.prisma.job.deleteMany({ where: { run_id: runId, available_at: { lte: clock.now() } } });
    await driveToEnd(db, e, runId);

    const rec = await recordOf(db, runId);
    // Held: the rollback that runs is undo-b then undo-a, each once; step 3 expired; the run ends Expired once.
    expect({
      run: rec.run.status,
      steps: rec.steps,
      compensations: rec.compensations,
      undone,
      ends: rec.ends,
      afterTheEnd: rec.afterTheEnd,
      rejected: rec.rejected,
    }).toEqual({
      run: 'Expired',
      steps: [
        [1, 'action', 'Completed', 1],
        [2, 'action', 'Completed', 1],
        [3, 'action', 'Expired', 1],
      ],
      compensations: [
        ['review20-mexp-undo-b', 'Completed', 1],
        ['review20-mexp-undo-a', 'Completed', 1],
      ],
      undone: ['b', 'a'],
      ends: 1,
      afterTheEnd: [],
      rejected: [3],
    });
    // The history's statement of the rollback, and the engine event: expected both compensations, as
    // the repair now states (review 18). Observed on main: only undo-a, the plan read before step 2 committed.
    expect({ expiryStarted: rec.expiryStarted, emitted }).toEqual({
      expiryStarted: ['review20-mexp-undo-b', 'review20-mexp-undo-a'],
      emitted: [['review20-mexp-undo-b', 'review20-mexp-undo-a']],
    });
  });
});
