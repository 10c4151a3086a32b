import { describe, expect, it } from 'vitest';
import { countHistoryByTag, countOrphanRows } from '../../../src/testing/count-history.ts';
import { seedHistory } from '../../../src/testing/seed-history.ts';
import { childWorkerSuite } from '../../support/spawn-worker.ts';
import { holdRuns, waitForWaiters } from '../../support/held-rows.ts';
import { waitFor } from '../../support/wait-for.ts';

const day = 86_400_000;
const script = 'packages/engine/test/regressions/review30/support/prune-child.ts';

/**
 * ADR 0027: "a run is gone whole or not at all, so a prune killed anywhere leaves no half-deleted
 * run, and a rerun carries on". A real child process prunes 12 old finished runs in ONE batch; the
 * batch's delete of `flow_events` is made to wait on an event row the test holds (so the batch has
 * already deleted the runs' steps and compensations, uncommitted), and the child is SIGKILLed there. Then the
 * test lets go of its row: the dead batch must leave every run whole, and a second pruner (also a
 * real process) must delete them all.
 */
describe('a prune SIGKILLed in the middle of a batch (PostgreSQL, real child processes)', () => {
  const suite = childWorkerSuite();

  it('leaves every run of the batch whole; the next prune deletes them all', async () => {
    const db = suite.db;
    await seedHistory(db.driver, { tag: 'old-done', at: new Date(Date.now() - 40 * day), runs: 12 });
    const before = await countHistoryByTag(db.driver);
    const [victim] = await db.driver.query<{ id: string }>(
      `select id::text as id from "sagaflow"."flow_runs" where business_key = 'old-done-7'`,
    );
    if (!victim) throw new Error('seed missing');

    const held = await holdRuns(suite.url, []);
    await held.client.query(
      `select 1 from "sagaflow"."flow_events" where run_id = $1::uuid order by id desc limit 1 for update`,
      [victim.id],
    );
    const child = await suite.spawn(script, { args: ['50'] });
    child.say();
    const [waiter] = await waitForWaiters(db, held.pid);
    expect(waiter?.query).toMatch(/delete from "sagaflow"."flow_events"/);
    expect(await child.kill()).toBe('SIGKILL');
    await held.rollback();
    // The killed backend finishes its statement, finds its client gone and aborts: wait for it to leave.
    await waitFor('the killed prune to leave no backend behind', async () => {
      const left = await db.driver.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity where datname = current_database() and pid = $1`,
        [waiter?.pid ?? -1],
      );
      return left[0]?.n === 0 ? true : undefined;
    });
    expect(await countHistoryByTag(db.driver)).toEqual(before);
    expect(await countOrphanRows(db.driver)).toBe(0);

    const rerun = await suite.spawn(script, { args: ['5'] });
    rerun.say();
    const m = await rerun.printed(/^pruned (.*)$/m);
    expect(JSON.parse(m[1]!)).toMatchObject({ flow_runs: 12, action_runs: 60 });
    expect(await db.prisma.flowRun.count()).toBe(0);
    expect(await countOrphanRows(db.driver)).toBe(0);
  });
});
