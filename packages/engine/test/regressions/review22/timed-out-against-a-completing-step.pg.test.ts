import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { holdRuns, waitForWaiters } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { bareEngine, gate } from '../harness.ts';
import { lockWaiters } from '../review21/lock-waiters.ts';
import { leftUndoneOf } from './support/left-undone.ts';

/**
 * Review 22. ADR 0091 decision 3: `in_flight` lists "each action step and each compensation whose row is
 * Running at the end", for TimedOut and Terminated alike. A terminate reads it under the run's lock; a
 * timeout (executeRun → findLeftUndone) reads it with plain statements before its settling transaction
 * takes the run's lock. A step outcome that was already waiting for the run's row (FOR KEY SHARE) when
 * the timeout read the rows commits before the timeout's terminal transition: the run ends TimedOut
 * saying the step was in flight (whether it took effect unknown) and not listing it as done, while its
 * row says Completed and its compensation (registered) never runs.
 *
 * Progress only: the plan's replay waits on a gate in the flow's code; a connection of the test's own
 * holds the run's row until the outcome and then the timeout's settle queue behind it, in that order.
 */
describe('a TimedOut run against a step outcome queued on its row (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('a step whose outcome commits before the TimedOut transition is listed as done, not in flight', async () => {
    if (!db.url) throw new Error('this test needs the PostgreSQL project');
    const started = gate();
    const release = gate();
    const planReached = gate();
    const planRelease = gate();
    let armed = false;
    const charge = defineAction({
      name: 'review22-topg-charge',
      run: async () => {
        started.open();
        await release.promise;
        return 'charged';
      },
    });
    const refund = defineAction({ name: 'review22-topg-refund', run: async () => null });
    const flow = defineFlow({
      name: 'review22-topg-flow',
      version: 1,
      run: async (ctx) => {
        if (armed) {
          planReached.open();
          await planRelease.promise;
        }
        await ctx
          .action(charge, null)
          .compensateWith(refund, () => null)
          .run();
        return ctx.awaitSignal('never', { timeoutSeconds: 36000 });
      },
    });
    const clock = new TestClock();
    const e = bareEngine(db, { flows: [flow], actions: [charge, refund], clock });
    const { runId } = await e.startFlow(flow, null, { runTimeoutSeconds: 60 });
    const live = executeRun(e.runtime, runId);
    await started.promise;
    clock.advance(120_000);
    armed = true;
    const timingOut = executeRun(e.runtime, runId);
    await planReached.promise; // loaded and marked active; the plan replays the code
    const holder = await holdRuns(db.url, [runId]);
    release.open(); // the charge returns: its outcome waits for the run's row
    await waitForWaiters(db, holder.pid, 1);
    planRelease.open(); // the plan ends, the rows are read (step 1 still Running), the settle waits behind
    await lockWaiters(db, 2);
    await holder.commit();
    expect(await timingOut).toBe('finished');
    await live;

    const l = await leftUndoneOf(db, runId);
    expect(l.status).toBe('TimedOut');
    expect(l.rows[0]).toEqual([1, 'action', charge.name, 'Completed']);
    expect(l.eventTypes.indexOf('action.completed#1')).toBeLessThan(l.eventTypes.indexOf('run.timedout'));
    expect(l.onEvent).toEqual(l.stated);
    // At the end, step 1 is Completed and nothing refunds it: the list must be the rows'.
    expect(l.statedShape, `left_undone: ${JSON.stringify(l.stated)}`).toEqual(l.fromRows);
  });
});
