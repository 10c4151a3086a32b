import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import type { Json } from '../../../src/definitions/define-action.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { cancelRun } from '../../../src/api/cancel-run.ts';
import { terminateRun } from '../../../src/api/terminate-run.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';
import { applyStepRepairNow } from '../review18/apply-step-repair-now.ts';
import { recordOf } from '../review20/record.ts';
import { anomaliesOf, driveTree, judgeTree } from '../review25/support/tree.ts';
import { heldDriver } from './support/held-driver.ts';

/**
 * Review 26 (ADR 0094 decision 2: a child's start writes a new version of its parent's row, under the lock it
 * already holds). Real PostgreSQL, several connections. A parent asks for child C from the continuation of a
 * step it did not await (`void ctx.action(x).run().then(() => ctx.child(C, { cancellation }))`) and returns; its
 * one-statement finish is held before it is sent. C's start transaction is then held AFTER its work (C's row
 * inserted, the parent's row touched, the parent's row lock held) and BEFORE its commit. While it is held, one
 * of these goes for the parent's row and is seen waiting for a lock (pg_stat_activity):
 * - `finish`: the one-statement finish itself (its snapshot older than C, its xmin gate must close);
 * - `cancel`: an operator's cancel of the parent (then the finish is let go after it);
 * - `terminate`: an operator's terminate of the parent (then the finish);
 * - `repair`: an operator's `run.resume_from_step` at x's step, drafted before C's step existed (then the
 *   finish): applied after C's start committed, it must not orphan C (its plan reads the steps under the lock);
 * - `sibling`: the finish of sibling child B ('propagate', started and committed before C's start ran; C's
 *   start is held before it begins meanwhile), which locks B and then goes for the parent's row to settle its
 *   step (then the finish).
 * Then C's start commits, the waiter goes on, the replay ends, and every wake of the tree is run.
 *
 * Guarantees: no deadlock or error; the parent ends once with nothing after but journaled refusals; at most one
 * child per position; a 'propagate' child open at the parent's end has its cancellation requested and runs no
 * action; an 'abandon' child is left alone; nothing is left open with nothing to wake it.
 */
describe(`a child's start holding its parent's row while another writer waits (postgres)`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  const lockWaiters = async (marker: string | null) =>
    (
      await db.prisma.$queryRaw<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock'
           and (${marker}::text is null or query like '%' || ${marker}::text || '%')`
    )[0]?.n ?? 0;

  let n = 0;
  const cases = [
    { waiter: 'finish', policy: 'propagate' },
    { waiter: 'finish', policy: 'abandon' },
    { waiter: 'cancel', policy: 'propagate' },
    { waiter: 'cancel', policy: 'abandon' },
    { waiter: 'terminate', policy: 'propagate' },
    { waiter: 'sibling', policy: 'propagate' },
    { waiter: 'repair', policy: 'propagate' },
  ] as const;
  for (const { waiter, policy } of cases)
    it(`C ('${policy}') holds the parent's row, touched and uncommitted, while the ${waiter} waits for it`, async () => {
      n += 1;
      const tag = `r26-holding-${n}`;
      const ran: Record<string, number> = {};
      const count = (k: string) => (ran[k] = (ran[k] ?? 0) + 1);
      const started = { x: gate(), y: gate() };
      const go = { x: gate(), y: gate() };
      const step = (k: 'x' | 'y') =>
        defineAction({
          name: `${tag}-${k}`,
          run: async () => {
            count(k);
            started[k].open();
            await go[k].promise;
            return k;
          },
        });
      const x = step('x');
      const y = step('y');
      const book = defineAction({ name: `${tag}-book`, run: async () => (count('book'), 'b') });
      const workB = defineAction({ name: `${tag}-workB`, run: async () => (count('workB'), 'b') });
      const workC = defineAction({ name: `${tag}-workC`, run: async () => (count('workC'), 'c') });
      const childB = defineFlow({ name: `${tag}-B`, version: 1, run: async (ctx, i: string) => ctx.action(workB, i) });
      const childC = defineFlow({ name: `${tag}-C`, version: 1, run: async (ctx, i: string) => ctx.action(workC, i) });
      const sibling = waiter === 'sibling';
      const parent = defineFlow({
        name: `${tag}-parent`,
        version: 1,
        run: async (ctx): Promise<Json> => {
          await ctx.action(book, null);
          void ctx
            .action(x, null)
            .run()
            .then(() => ctx.child(childC, 'c', { cancellation: policy }))
            .catch(() => undefined);
          if (sibling)
            void ctx
              .action(y, null)
              .run()
              .then(() => ctx.child(childB, 'b', { cancellation: 'propagate' }))
              .catch(() => undefined);
          await started.x.promise;
          if (sibling) await started.y.promise;
          return 'done';
        },
      });
      const e = bareEngine(db, {
        clock: new TestClock(),
        flows: [parent, childB, childC],
        actions: [book, x, y, workB, workC],
      });
      const { runId } = await e.startFlow(parent, null);
      await db.prisma.job.deleteMany({ where: { run_id: runId } });
      const held = heldDriver(e.runtime, () => runId);
      const childOf = (flow: string) =>
        db.prisma.flowRun.findFirst({ where: { parent_run_id: runId, flow_name: flow } });

      const live = executeRun(held.deps, runId);
      await held.finish.reached;
      let siblingFinish: Promise<unknown> | null = null;
      if (sibling) {
        // A replay that parked on a waiting child asks for nothing more, so C's start is on its way first: held
        // before it begins while B's start commits; then C's start runs and is held before its commit.
        held.beforeBegin.arm();
        go.x.open();
        await held.beforeBegin.reached;
        go.y.open();
        await waitFor(`B's start to be committed`, async () => ((await childOf(`${tag}-B`)) ? true : undefined));
        held.childStart.arm();
        held.beforeBegin.release();
        await held.childStart.reached;
        // B runs to its end: its finish locks B, then goes for the parent's row to settle its step, and waits.
        const b = await childOf(`${tag}-B`);
        siblingFinish = executeRun(e.runtime, b!.id);
        await waitFor(`B's finish to wait for the parent's row`, async () =>
          (await lockWaiters(null)) > 0 ? true : undefined,
        );
      } else {
        held.childStart.arm();
        go.x.open();
        await held.childStart.reached;
      }

      let op: Promise<unknown> | null = null;
      if (waiter === 'finish') {
        held.finish.release();
        await waitFor('the one-statement finish to wait for the run lock', async () =>
          (await lockWaiters('top-level run finishes')) > 0 ? true : undefined,
        );
      } else if (waiter === 'cancel' || waiter === 'terminate' || waiter === 'repair') {
        op =
          waiter === 'cancel'
            ? cancelRun(e.runtime, runId, { reason: 'operator' })
            : waiter === 'terminate'
              ? terminateRun(e.runtime, runId, { reason: 'operator' })
              : // Resume from x's step (drafted now, before C's step exists): it would forget C's position.
                applyStepRepairNow(db, e, 'run.resume_from_step', { runId, stepSequence: 2 }, 'r26').then(
                  (r) => r.status,
                  (err: unknown) => (err as { code?: string }).code ?? String(err),
                );
        await waitFor(`the ${waiter} to wait for the parent's row`, async () =>
          (await lockWaiters(null)) > 0 ? true : undefined,
        );
      }
      held.childStart.release();
      const opResult = op ? await op : null;
      if (siblingFinish) await siblingFinish;
      if (waiter !== 'finish') held.finish.release();
      const outcome = await live;
      const atEnd = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      const kidsAtEnd = await db.prisma.flowRun.findMany({ where: { parent_run_id: runId } });
      await driveTree(db, e, runId);

      const p = await recordOf(db, runId);
      const tree = await judgeTree(db, runId);
      const kids = await db.prisma.flowRun.findMany({ where: { parent_run_id: runId } });
      const perPosition = new Map<number | null, number>();
      for (const k of kids) perPosition.set(k.parent_sequence, (perPosition.get(k.parent_sequence) ?? 0) + 1);
      const c = kids.find((k) => k.flow_name === `${tag}-C`);
      const cAtEnd = kidsAtEnd.find((k) => k.flow_name === `${tag}-C`);
      const propagate = policy === 'propagate';
      // A cancel requested after the code returned is cooperative: no step is left to deliver it at, so the
      // run may end Completed (observed here) or Cancelled; neither is what this test judges.
      const parentEnd: unknown =
        waiter === 'cancel'
          ? expect.stringMatching(/^(Completed|Cancelled)$/)
          : waiter === 'terminate'
            ? 'Terminated'
            : 'Completed';
      expect({
        opResult,
        outcome: typeof outcome,
        parent: { status: p.run.status, ends: p.ends, afterTheEnd: p.afterTheEnd },
        childrenPerPosition: [...perPosition.values()].filter((v) => v > 1),
        cExists: c !== undefined,
        // A 'propagate' child open when its parent ended has its cancellation requested by then.
        cAtParentEnd:
          cAtEnd && atEnd.finished_at !== null
            ? { open: cAtEnd.finished_at === null, cancelRequested: cAtEnd.cancel_requested_at !== null }
            : 'parent not ended by the replay',
        cFinally: c ? [c.status, c.cancel_requested_at !== null] : null,
        workC: ran.workC ?? 0,
        // The sibling's schedule happened: B was started behind C's start, and ran to its end.
        b: sibling ? kids.filter((k) => k.flow_name === `${tag}-B`).map((k) => [k.status, ran.workB ?? 0]) : null,
        stuck: tree.filter((t) => t.stuck !== null),
        treeEnds: tree.filter((t) => t.ends !== 1 || t.afterTheEnd.length > 0),
        parentAnomaliesOtherThanRefusals: (await anomaliesOf(db, runId)).filter(
          (a) => !/^(write_refused|outcome_rejected)#/.test(a),
        ),
      }).toEqual({
        opResult:
          waiter === 'cancel'
            ? { requested: true }
            : waiter === 'terminate'
              ? { terminated: true }
              : waiter === 'repair'
                ? (expect.stringMatching(/^repair_(conflict|refused)$/) as unknown)
                : null,
        outcome: 'string',
        parent: { status: parentEnd, ends: 1, afterTheEnd: [] },
        childrenPerPosition: [],
        cExists: true,
        // A terminate ends the child with its parent (ADR 0089): closed, not cancelled. Since ADR 0125 the
        // terminate fences the tree first (its cancellation requested with the window closed, no event),
        // then terminates it in batches: the Terminated child carries the fence's request.
        cAtParentEnd:
          cAtEnd && atEnd.finished_at !== null
            ? waiter === 'terminate'
              ? { open: false, cancelRequested: true }
              : { open: cAtEnd.finished_at === null, cancelRequested: propagate }
            : 'parent not ended by the replay',
        cFinally: propagate
          ? waiter === 'terminate'
            ? ['Terminated', true]
            : ['Cancelled', true]
          : ['Completed', false],
        workC: propagate ? 0 : 1,
        b: sibling ? [['Completed', 1]] : null,
        stuck: [],
        treeEnds: [],
        parentAnomaliesOtherThanRefusals: [],
      });
    });
});
