import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import type { Json } from '../../../src/definitions/define-action.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine } from '../harness.ts';
import { recordOf } from '../review20/record.ts';
import { anomaliesOf, driveTree, judgeTree } from '../review25/support/tree.ts';
import { heldDriver } from './support/held-driver.ts';

/**
 * Review 26 (ADR 0094 decision 2: the child's start touches its parent's row under the lock it holds). Two
 * replays of the same parent reach the same child position at once (real PostgreSQL). Replay 1's start of C is
 * held after its work (C inserted, the parent's row touched and locked) and before its commit; replay 2, started
 * meanwhile on another connection, goes for the parent's row and is seen waiting for the lock; replay 1 commits,
 * replay 2 goes on. Then every wake of the tree is run.
 *
 * Guarantees: at most one child run at the position; the parent ends once, with nothing after its end but
 * journaled refusals; no replay errors; nothing is left open with nothing to wake it.
 */
describe(`two replays of a parent start the same child (postgres)`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it(`replay 2 waits on replay 1's start of the child, then goes on`, async () => {
    const tag = `r26-twice`;
    const ran: Record<string, number> = {};
    const count = (k: string) => (ran[k] = (ran[k] ?? 0) + 1);
    const book = defineAction({ name: `${tag}-book`, run: async () => (count('book'), 'b') });
    const work = defineAction({ name: `${tag}-work`, run: async () => (count('work'), 'w') });
    const childC = defineFlow({ name: `${tag}-C`, version: 1, run: async (ctx, i: string) => ctx.action(work, i) });
    const parent = defineFlow({
      name: `${tag}-parent`,
      version: 1,
      run: async (ctx): Promise<Json> => {
        await ctx.action(book, null);
        return ctx.child(childC, 'c');
      },
    });
    const e = bareEngine(db, { clock: new TestClock(), flows: [parent, childC], actions: [book, work] });
    const { runId } = await e.startFlow(parent, null);
    await db.prisma.job.deleteMany({ where: { run_id: runId } });
    const held = heldDriver(e.runtime, () => runId);
    // The one-statement finish goes through at once (only the child's start is held here).
    held.finish.release();

    held.childStart.arm();
    const first = executeRun(held.deps, runId);
    await held.childStart.reached;
    const second = executeRun(e.runtime, runId);
    await waitFor(`replay 2 to wait for the parent's row`, async () =>
      (
        await db.prisma.$queryRaw<{ n: number }[]>`
            select count(*)::int as n from pg_stat_activity
             where datname = current_database() and wait_event_type = 'Lock'`
      )[0]!.n > 0
        ? true
        : undefined,
    );
    held.childStart.release();
    const outcomes = await Promise.allSettled([first, second]);
    await driveTree(db, e, runId);

    const p = await recordOf(db, runId);
    const tree = await judgeTree(db, runId);
    const kids = await db.prisma.flowRun.findMany({ where: { parent_run_id: runId } });
    expect({
      rejected: outcomes.flatMap((o) => (o.status === 'rejected' ? [String(o.reason)] : [])),
      children: kids.map((k) => k.parent_sequence),
      parent: { status: p.run.status, ends: p.ends, afterTheEnd: p.afterTheEnd },
      child: kids.map((k) => [k.status, k.cancel_requested_at !== null]),
      work: ran.work ?? 0,
      stuck: tree.filter((t) => t.stuck !== null),
      treeEnds: tree.filter((t) => t.ends !== 1 || t.afterTheEnd.length > 0),
      parentAnomaliesOtherThanRefusals: (await anomaliesOf(db, runId)).filter(
        (a) => !/^(write_refused|outcome_rejected)#/.test(a),
      ),
    }).toEqual({
      rejected: [],
      children: [kids[0]?.parent_sequence ?? -1],
      parent: { status: 'Completed', ends: 1, afterTheEnd: [] },
      child: [['Completed', false]],
      work: 1,
      stuck: [],
      treeEnds: [],
      parentAnomaliesOtherThanRefusals: [],
    });
  });
});
