import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import type { Json } from '../../../src/definitions/define-action.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';
import { recordOf } from '../review20/record.ts';
import { driveTree, judgeTree } from './support/tree.ts';

/**
 * Review 25 (ADR 0093 decision 3, second bullet: "the one-statement finish cannot see a child whose start
 * commits while it waits for the run's lock ... a run whose code asked for a child in this replay
 * (`session.askedForChild`, set before anything async) ... ends in the transaction").
 *
 * The flag is read once, when the finish is chosen. A flow that chains a child after a step it did not await
 * (`void ctx.action(x).run().then(() => ctx.child(C))`) and returns asks for C only when x finishes, which can
 * be AFTER the choice, while the one-statement finish is on its way. Schedule (real PostgreSQL, driven by
 * progress): a connection of the test's holds the parent's row FOR KEY SHARE (as another replay's claim or
 * outcome does, ADR 0042); the parent's code returns and its one-statement finish waits for FOR UPDATE (seen in
 * pg_stat_activity); x is let go; its continuation asks for C, whose start locks the parent FOR NO KEY UPDATE
 * (compatible with the holder's KEY SHARE) and either commits (C exists) or waits behind the finish; then the
 * holder commits.
 *
 * Guarantee (ADR 0093): no parent ends leaving an open 'propagate' child without a cancel request; each child
 * ends or is cancel-requested; nothing follows the parent's end.
 */
describe(`a child asked for while the one-statement finish waits for the run's lock (postgres)`, () => {
  let db: Database & { url?: string };
  let holder: pg.Client;
  beforeAll(async () => {
    db = await openTestDatabase();
    holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
  });
  afterAll(async () => {
    await holder.end();
    await db.close();
  });

  it(`an un-awaited step's continuation starts a 'propagate' child while the parent's finish waits`, async () => {
    const ran: Record<string, number> = {};
    const xRuns = gate();
    const xGo = gate();
    const count = (k: string) => (ran[k] = (ran[k] ?? 0) + 1);
    const book = defineAction({ name: 'r25-chain-book', run: async () => (count('book'), 'b') });
    const x = defineAction({
      name: 'r25-chain-x',
      run: async () => {
        count('x');
        xRuns.open();
        await xGo.promise;
        return 'x';
      },
    });
    const work = defineAction({ name: 'r25-chain-work', run: async () => (count('work'), 'w') });
    const childC = defineFlow({ name: 'r25-chain-C', version: 1, run: async (ctx, i: string) => ctx.action(work, i) });
    const parent = defineFlow({
      name: 'r25-chain-parent',
      version: 1,
      run: async (ctx): Promise<Json> => {
        await ctx.action(book, null);
        void ctx
          .action(x, null)
          .run()
          .then(() => ctx.child(childC, 'c'))
          .catch(() => undefined);
        await xRuns.promise;
        return 'done';
      },
    });
    const e = bareEngine(db, { clock: new TestClock(), flows: [parent, childC], actions: [book, x, work] });
    const { runId } = await e.startFlow(parent, null);
    await db.prisma.job.deleteMany({ where: { run_id: runId } });

    // The holder: the parent's row FOR KEY SHARE, in a transaction left open.
    await holder.query('BEGIN');
    const locked = await holder.query(`select id from "sagaflow"."flow_runs" where id = $1 for key share`, [runId]);
    expect(locked.rowCount).toBe(1);

    const live = executeRun(e.runtime, runId);
    const waiters = async (marker: string) =>
      (
        await db.prisma.$queryRaw<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
           where datname = current_database() and wait_event_type = 'Lock' and query like ${`%${marker}%`}`
      )[0]?.n ?? 0;
    // The parent's code returned (x runs, un-awaited); its one-statement finish waits for the run's lock.
    await xRuns.promise;
    await waitFor('the one-statement finish to wait for the run lock', async () =>
      (await waiters('top-level run finishes')) > 0 ? true : undefined,
    );
    // x finishes: its continuation asks for child C, whose start goes for the parent's row.
    xGo.open();
    const childStartOutcome = await waitFor('child C to be committed, or its start to wait too', async () => {
      const c = await db.prisma.flowRun.count({ where: { parent_run_id: runId } });
      if (c > 0) return 'child committed while the finish waited';
      const all =
        (
          await db.prisma.$queryRaw<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
           where datname = current_database() and wait_event_type = 'Lock'`
        )[0]?.n ?? 0;
      return all >= 2 ? 'child start waits behind the finish' : undefined;
    });
    await holder.query('COMMIT');
    const outcome = await live;
    const atParentEnd = (await db.prisma.flowRun.findMany({ where: { parent_run_id: runId } })).map((k) => ({
      open: k.finished_at === null,
      cancelRequested: k.cancel_requested_at !== null,
    }));
    // Let every wake run (the child's own, any the late write owes).
    await driveTree(db, e, runId);

    const p = await recordOf(db, runId);
    const kids = await db.prisma.flowRun.findMany({ where: { parent_run_id: runId } });
    const tree = await judgeTree(db, runId);
    expect({
      childStartOutcome,
      outcome,
      atParentEnd,
      parent: { status: p.run.status, ends: p.ends, afterTheEnd: p.afterTheEnd },
      // An open 'propagate' child at the parent's end must be cancel-requested; one that finished must have
      // been cancelled by the end (it ran no action).
      children: kids.map((k) => ({ cancelRequested: k.cancel_requested_at !== null, status: k.status })),
      work: ran.work ?? 0,
      stuck: tree.filter((t) => t.stuck !== null),
    }).toEqual({
      childStartOutcome: expect.any(String) as string,
      outcome: 'finished',
      // A child open at the parent's end has its cancellation requested by that end.
      atParentEnd: atParentEnd.map((k) => (k.open ? { open: true, cancelRequested: true } : k)),
      parent: { status: 'Completed', ends: 1, afterTheEnd: [] },
      children: kids.map(() => ({ cancelRequested: true, status: 'Cancelled' })),
      work: 0,
      stuck: [],
    });
  });
});
