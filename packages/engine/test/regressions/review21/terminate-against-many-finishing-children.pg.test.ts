import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { listOpenChildren } from '../../../src/store/list-open-children.ts';
import { waitersOn } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';
import { recordOf } from '../review20/record.ts';
import { lockWaiters } from './lock-waiters.ts';

/**
 * Review 21. ADR 0089 as first landed (ebae558) locked the root, then each child, and accepted the
 * lock cycle with a finishing child (child, then parent) because an operator's transaction runs again
 * on 40P01 (ADR 0074: up to 5 attempts). With 5 children finishing one after another, every attempt
 * met a new cycle, and the operator was handed "deadlock detected" after the fifth, the tree left
 * open. Since the amendment the terminate locks the tree deepest first and the root last
 * (lockOpenTree), so it waits for a finishing child without holding its parent.
 *
 * Here a root has 5 'propagate' children, each finishing for real: its replay locked its run's row
 * and waits to record its step's outcome, because a connection of the test's own holds that step row.
 * The terminate is sent while all five wait; then the step rows are let go one at a time, each once
 * the child before it has ended.
 *
 * Designed (ADR 0074's consequence: "an operator's command no longer fails because of the engine's
 * own lock order"): the terminate returns its own outcome, not a deadlock error; each finishing child
 * ends Completed (waited for) or, if PostgreSQL rolled its finish back, Terminated; the root ends
 * Terminated; every run ends once and nothing follows any end.
 */
const children = 5;

describe('terminate against many finishing children (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 12 });
  });
  afterAll(async () => {
    await db.close();
  });

  it('the operator is not handed a deadlock, however many children finish meanwhile', async () => {
    if (!db.url) throw new Error('this test needs the PostgreSQL project');
    const reached = Array.from({ length: children }, () => gate());
    const go = Array.from({ length: children }, () => gate());
    const work = defineAction({
      name: 'review21-many-work',
      run: async (i: number) => {
        reached[i]!.open();
        await go[i]!.promise;
        return i;
      },
    });
    const child = defineFlow({
      name: 'review21-many-child',
      version: 1,
      run: async (ctx, i: number) => ctx.action(work, i),
    });
    const root = defineFlow({
      name: 'review21-many-root',
      version: 1,
      run: async (ctx) => Promise.all(Array.from({ length: children }, (_, i) => ctx.child(child, i))),
    });
    const e = bareEngine(db, { flows: [root, child], actions: [work] });
    const { runId } = await e.startFlow(root, null);
    expect(await executeRun(e.runtime, runId)).toBe('parked');
    // The replay parks once the first child waits; the other starts may still be committing then.
    // The order the terminate reaches the children in, attempt after attempt (the same query).
    const order = await waitFor('every child to be started', async () => {
      const open = await listOpenChildren(db.prisma, runId);
      return open.length === children ? open : undefined;
    });
    const kids = await Promise.all(order.map((id) => db.prisma.flowRun.findUniqueOrThrow({ where: { id } })));
    const lives = kids.map((c) =>
      executeRun(e.runtime, c.id).then(
        (r) => r,
        (err: { code?: string; message?: string }) => `threw ${err.code ?? err.message}`,
      ),
    );
    for (const g of reached) await g.promise;

    // Each child's step row, held on a connection of its own.
    const holders: { client: pg.Client; pid: number; open: boolean }[] = [];
    for (const c of kids) {
      const step = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: c.id, sequence: 1 } });
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      await client.query('begin');
      await client.query('select id from sagaflow.action_runs where id = $1 for update', [step.id]);
      holders.push({ client, pid, open: true });
    }
    // Every child's finish: it locks its run's row, then waits for its step row.
    for (const [k, c] of kids.entries()) {
      go[c.input as number]!.open();
      await waitFor(`child ${k}'s finish to wait`, async () =>
        (await waitersOn(db, holders[k]!.pid)).length ? true : undefined,
      );
    }
    const terminating = e.terminate(runId, { reason: 'review21: stop the fan-out' }).then(
      (r) => r,
      (err: { code?: string; message?: string }) => ({
        error: /40P01|deadlock/.test(err.message ?? '') ? 'deadlock detected' : (err.code ?? err.message ?? 'error'),
      }),
    );
    // The terminate waits too (for a child's row, behind that child's finish).
    await lockWaiters(db, children + 1);
    // The step rows go one at a time, each once the child before it has ended.
    for (const [k, h] of holders.entries()) {
      await h.client.query('commit');
      h.open = false;
      await waitFor(`child ${k} to end`, async () =>
        (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: kids[k]!.id } })).finished_at ? true : undefined,
      );
    }
    for (const h of holders) await h.client.end();
    const terminated = await terminating;
    const finishes = await Promise.all(lives);

    const records = await Promise.all([runId, ...kids.map((c) => c.id)].map((id) => recordOf(db, id)));
    expect({
      terminated,
      root: records[0]!.run.status,
      open: records.filter((r) => r.run.open).length,
      ends: records.map((r) => r.ends),
      afterTheEnd: records.map((r) => r.afterTheEnd),
      // A child's finish is waited for and completes. Or, when its transaction upgrades its run's lock
      // to finish the run while the terminate is queued for that row, PostgreSQL rolls the finish back
      // (a transient error for its worker, ADR 0089) and the child ends Terminated with the tree.
      children: records
        .slice(1)
        .map((r, k) =>
          r.run.status === 'Completed'
            ? finishes[k]
            : `${r.run.status}${finishes[k] === 'finished' ? ', yet its replay said finished' : ''}`,
        ),
    }).toEqual({
      terminated: { terminated: true },
      root: 'Terminated',
      children: records.slice(1).map((r) => (r.run.status === 'Completed' ? 'finished' : 'Terminated')),
      open: 0,
      ends: records.map(() => 1),
      afterTheEnd: records.map(() => []),
    });
  });
});
