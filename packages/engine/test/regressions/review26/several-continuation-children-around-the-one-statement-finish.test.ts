import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import type { Json } from '../../../src/definitions/define-action.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';
import { recordOf } from '../review20/record.ts';
import { anomaliesOf, driveTree, judgeTree } from '../review25/support/tree.ts';
import { heldDriver } from './support/held-driver.ts';

/**
 * Review 26 (ADR 0094, decision 1: the one-statement finish refuses a run with an open 'propagate' child; ADR
 * 0093 decision 3: a run's end requests the cancellation of its open 'propagate' children; 'abandon' children
 * are left alone).
 *
 * A parent asks for TWO children from continuations of steps it did not await, and returns:
 *   void ctx.action(x1).run().then(() => ctx.child(A, { cancellation: 'propagate' }))
 *   void ctx.action(x2).run().then(() => ctx.child(B, { cancellation: 'abandon' }))
 * Schedule (gates only): the one-statement finish is held before it is sent; the steps named in `before` are
 * let go and their children's starts are seen committed (rows polled; with both, A's start is held before it
 * begins while B's commits, because a replay that parked on a waiting child asks for nothing more); the finish is sent and the replay ends;
 * then the other steps are let go (their continuations run after the parent's end) and the test waits for those
 * continuations to settle.
 *
 * Guarantees: the parent ends once, with nothing after its end but journaled refusals; at most one child run per
 * position; a 'propagate' child open at the parent's end has its cancellation requested and runs no action; an
 * 'abandon' child is left alone (no cancel request, it runs); a child asked for after the end writes nothing;
 * nothing is left open with nothing to wake it. Also recorded: whether the one-statement finish itself ended the
 * run (ADR 0094 says a run with only an 'abandon' child, or none, keeps it).
 */
describe(`several children asked for from continuations around the one-statement finish (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  let n = 0;
  const cases: { before: ('x1' | 'x2')[] }[] = [
    { before: ['x1', 'x2'] },
    { before: ['x1'] },
    { before: ['x2'] },
    { before: [] },
  ];
  for (const { before } of cases)
    it(`children committed before the finish statement: [${before.join(', ')}]; the others asked for after the end`, async () => {
      n += 1;
      const tag = `r26-several-${n}`;
      const ran: Record<string, number> = {};
      const count = (k: string) => (ran[k] = (ran[k] ?? 0) + 1);
      const started = { x1: gate(), x2: gate() };
      const go = { x1: gate(), x2: gate() };
      const asked: string[] = [];
      const step = (k: 'x1' | 'x2') =>
        defineAction({
          name: `${tag}-${k}`,
          run: async () => {
            count(k);
            started[k].open();
            await go[k].promise;
            return k;
          },
        });
      const x1 = step('x1');
      const x2 = step('x2');
      const book = defineAction({ name: `${tag}-book`, run: async () => (count('book'), 'b') });
      const workA = defineAction({ name: `${tag}-workA`, run: async () => (count('workA'), 'a') });
      const workB = defineAction({ name: `${tag}-workB`, run: async () => (count('workB'), 'b') });
      const childA = defineFlow({ name: `${tag}-A`, version: 1, run: async (ctx, i: string) => ctx.action(workA, i) });
      const childB = defineFlow({ name: `${tag}-B`, version: 1, run: async (ctx, i: string) => ctx.action(workB, i) });
      const parent = defineFlow({
        name: `${tag}-parent`,
        version: 1,
        run: async (ctx): Promise<Json> => {
          await ctx.action(book, null);
          void ctx
            .action(x1, null)
            .run()
            .then(() => (asked.push('A'), ctx.child(childA, 'a', { cancellation: 'propagate' })))
            .catch(() => undefined);
          void ctx
            .action(x2, null)
            .run()
            .then(() => (asked.push('B'), ctx.child(childB, 'b', { cancellation: 'abandon' })))
            .catch(() => undefined);
          await started.x1.promise;
          await started.x2.promise;
          return 'done';
        },
      });
      const e = bareEngine(db, {
        clock: new TestClock(),
        flows: [parent, childA, childB],
        actions: [book, x1, x2, workA, workB],
      });
      const { runId } = await e.startFlow(parent, null);
      await db.prisma.job.deleteMany({ where: { run_id: runId } });
      const held = heldDriver(e.runtime, () => runId);

      const live = executeRun(held.deps, runId);
      await held.finish.reached;
      const flowOf = { x1: `${tag}-A`, x2: `${tag}-B` };
      const committed = (k: 'x1' | 'x2') =>
        waitFor(`the child asked for after ${k} to be committed`, async () =>
          (await db.prisma.flowRun.count({ where: { parent_run_id: runId, flow_name: flowOf[k] } })) > 0
            ? true
            : undefined,
        );
      if (before.length === 2) {
        // A child that is waiting parks the replay, and a parked replay asks for nothing more: both starts must
        // be on their way before either answers. A's start is held before it begins, B's commits, then A's.
        held.beforeBegin.arm();
        go.x1.open();
        await held.beforeBegin.reached;
        go.x2.open();
        await committed('x2');
        held.beforeBegin.release();
        await committed('x1');
      } else
        for (const k of before) {
          go[k].open();
          await committed(k);
        }
      held.finish.release();
      const outcome = await live;
      const atEnd = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      const kidsAtEnd = await db.prisma.flowRun.findMany({ where: { parent_run_id: runId } });
      const after = (['x1', 'x2'] as const).filter((k) => !before.includes(k));
      // The steps still in flight end after the parent's end: each one's late outcome is turned away (journaled).
      for (const [i, k] of after.entries()) {
        go[k].open();
        await waitFor(`${k}'s late outcome to be journaled as refused`, async () =>
          (await anomaliesOf(db, runId)).filter((a) => /^(write_refused|outcome_rejected)#/.test(a)).length > i
            ? true
            : undefined,
        );
      }
      // And each one's continuation asked for its child (after the end): that start must write nothing.
      await waitFor('the late continuations to ask for their children', async () =>
        after.every((k) => asked.includes(k === 'x1' ? 'A' : 'B')) ? true : undefined,
      );
      await driveTree(db, e, runId);

      const p = await recordOf(db, runId);
      const tree = await judgeTree(db, runId);
      const kids = await db.prisma.flowRun.findMany({ where: { parent_run_id: runId } });
      const perPosition = new Map<number | null, number>();
      for (const k of kids) perPosition.set(k.parent_sequence, (perPosition.get(k.parent_sequence) ?? 0) + 1);
      const byFlow = (rows: typeof kids, flow: string) => rows.filter((k) => k.flow_name === flow);
      const endEvent = await db.prisma.flowEvent.findFirstOrThrow({ where: { run_id: runId, type: 'run.completed' } });
      const hasA = before.includes('x1');
      const hasB = before.includes('x2');
      expect({
        outcome,
        parent: { status: atEnd.status, ends: p.ends, afterTheEnd: p.afterTheEnd },
        childrenPerPosition: [...perPosition.values()].filter((c) => c > 1),
        aAtParentEnd: byFlow(kidsAtEnd, `${tag}-A`).map((k) => ({
          open: k.finished_at === null,
          cancelRequested: k.cancel_requested_at !== null,
        })),
        bAtParentEnd: byFlow(kidsAtEnd, `${tag}-B`).map((k) => ({
          open: k.finished_at === null,
          cancelRequested: k.cancel_requested_at !== null,
        })),
        aFinally: byFlow(kids, `${tag}-A`).map((k) => k.status),
        bFinally: byFlow(kids, `${tag}-B`).map((k) => [k.status, k.cancel_requested_at !== null]),
        work: { a: ran.workA ?? 0, b: ran.workB ?? 0 },
        childrenCancelledAtEnd: ((endEvent.data as { children_cancelled?: string[] }).children_cancelled ?? []).length,
        stuck: tree.filter((t) => t.stuck !== null),
        afterTheEndInTree: tree.filter((t) => t.afterTheEnd.length > 0 || t.ends !== 1),
        parentAnomaliesOtherThanRefusals: (await anomaliesOf(db, runId)).filter(
          (a) => !/^(write_refused|outcome_rejected)#/.test(a),
        ),
      }).toEqual({
        outcome: 'finished',
        parent: { status: 'Completed', ends: 1, afterTheEnd: [] },
        childrenPerPosition: [],
        aAtParentEnd: hasA ? [{ open: true, cancelRequested: true }] : [],
        bAtParentEnd: hasB ? [{ open: true, cancelRequested: false }] : [],
        aFinally: hasA ? ['Cancelled'] : [],
        bFinally: hasB ? [['Completed', false]] : [],
        work: { a: 0, b: hasB ? 1 : 0 },
        childrenCancelledAtEnd: hasA ? 1 : 0,
        stuck: [],
        afterTheEndInTree: [],
        parentAnomaliesOtherThanRefusals: [],
      });
      // ADR 0094: only an open 'propagate' child keeps the one-statement finish from ending the run; an 'abandon'
      // child (or none) leaves it as it was (PostgreSQL: the child's touch committed before the statement's
      // snapshot, so the xmin gate is open).
      expect(held.finish.results).toEqual([[hasA ? null : 'Completed']]);
    });
});
