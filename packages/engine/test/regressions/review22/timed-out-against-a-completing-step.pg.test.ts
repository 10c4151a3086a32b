import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { holdRuns, waitForWaiters } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { lockWaiters } from '../review21/lock-waiters.ts';
import { chargeHeldPastItsTimeout } from './support/charge-held-past-its-timeout.ts';
import { leftUndoneOf } from './support/left-undone.ts';

/**
 * Review 22. ADR 0091 decision 3: `in_flight` lists "each action step and each compensation whose row is
 * Running at the end", for TimedOut and Terminated alike. As first written (ce4843a), a timeout read it
 * with plain statements before its settling transaction took the run's lock: a step outcome already
 * waiting for the run's row (FOR KEY SHARE) committed before the terminal transition, and the run ended
 * TimedOut saying the step was in flight and not listing it as done, while its row said Completed and
 * its compensation never ran. Since ADR 0091's amendment the timeout reads the rows under the run's
 * lock, in the transaction that closes it.
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
    const { charge, runId, live, timingOut, release, planRelease } = await chargeHeldPastItsTimeout(
      db,
      'review22-topg',
    );
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
