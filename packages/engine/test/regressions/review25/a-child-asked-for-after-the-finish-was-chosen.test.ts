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
import { pausedAutocommit, pausedNextTransaction } from './support/paused-autocommit.ts';
import { anomaliesOf, driveTree, judgeTree } from './support/tree.ts';

/**
 * Review 25 (ADR 0093 decision 3, second bullet). `session.askedForChild` is read once, when settleRun chooses
 * the one-statement finish. A flow that chains a child after a step it did not await
 * (`void ctx.action(x).run().then(() => ctx.child(C, { cancellation }))`) and returns asks for C only when x
 * finishes, which may be after that choice. The one-statement finish never lists children.
 *
 * Schedule (gates only): the parent's code returns while x runs; its one-statement finish is held just before
 * it is sent (the driver's autocommitted statement, matched by its marker); x is let go; its continuation
 * starts C, whose start transaction commits (C's row is polled for); then the finish is sent.
 *
 * Guarantee: no parent ends leaving an open 'propagate' child without a cancel request (ADR 0093); the child
 * then runs no action after its parent's end; an 'abandon' child is left alone and runs; nothing follows the
 * parent's end except journaled refusals; nothing is left open with nothing to wake it.
 */
describe(`a child asked for after the one-statement finish was chosen (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  let n = 0;
  const cases = [
    { policy: 'propagate', finish: 'one statement' },
    { policy: 'abandon', finish: 'one statement' },
    // Control: the same schedule with the finish forced into the transaction (a ctx.now() value is waiting, so
    // canFuse says no), held before its first statement (the run's lock FOR UPDATE). It lists C and cancels it.
    { policy: 'propagate', finish: 'transaction' },
  ] as const;
  for (const { policy, finish } of cases)
    it(`an un-awaited step's continuation starts a '${policy}' child while the finish (${finish}) is on its way`, async () => {
      n += 1;
      const tag = `r25-chosen-${n}`;
      const ran: Record<string, number> = {};
      const xRuns = gate();
      const xGo = gate();
      const count = (k: string) => (ran[k] = (ran[k] ?? 0) + 1);
      const book = defineAction({ name: `${tag}-book`, run: async () => (count('book'), 'b') });
      const x = defineAction({
        name: `${tag}-x`,
        run: async () => {
          count('x');
          // The control's finish is the next transaction the parent's replay asks for.
          if (finish === 'transaction') pausedTx.arm();
          xRuns.open();
          await xGo.promise;
          return 'x';
        },
      });
      const work = defineAction({ name: `${tag}-work`, run: async () => (count('work'), 'w') });
      const childC = defineFlow({ name: `${tag}-C`, version: 1, run: async (ctx, i: string) => ctx.action(work, i) });
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
          await xRuns.promise;
          if (finish === 'transaction') ctx.now();
          return 'done';
        },
      });
      const e = bareEngine(db, { clock: new TestClock(), flows: [parent, childC], actions: [book, x, work] });
      const pausedTx = pausedNextTransaction(e.runtime);
      const { runId } = await e.startFlow(parent, null);
      await db.prisma.job.deleteMany({ where: { run_id: runId } });

      const paused = finish === 'one statement' ? pausedAutocommit(e.runtime, /top-level run finishes/) : pausedTx;
      const live = executeRun(paused.deps, runId);
      await paused.reached;
      // The finish was chosen (one statement) and is about to be sent; now x finishes and C is asked for.
      xGo.open();
      await waitFor('child C to be committed', async () =>
        (await db.prisma.flowRun.count({ where: { parent_run_id: runId } })) > 0 ? true : undefined,
      );
      paused.release();
      const outcome = await live;
      const atEnd = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      const childAtEnd = await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: runId } });
      await driveTree(db, e, runId);

      const p = await recordOf(db, runId);
      const tree = await judgeTree(db, runId);
      const propagate = policy === 'propagate';
      expect({
        outcome,
        parent: { status: atEnd.status, ends: p.ends, afterTheEnd: p.afterTheEnd },
        childAtParentEnd: {
          open: childAtEnd.finished_at === null,
          cancelRequested: childAtEnd.cancel_requested_at !== null,
        },
        childFinally: tree.slice(1).map((t) => [t.status, t.ends, t.afterTheEnd]),
        work: ran.work ?? 0,
        stuck: tree.filter((t) => t.stuck !== null),
        parentAnomaliesOtherThanRefusals: (await anomaliesOf(db, runId)).filter(
          (a) => !/^(write_refused|outcome_rejected)#/.test(a),
        ),
      }).toEqual({
        outcome: 'finished',
        parent: { status: 'Completed', ends: 1, afterTheEnd: [] },
        // Open at the parent's end: a 'propagate' child must have its cancellation requested by that end.
        childAtParentEnd: { open: true, cancelRequested: propagate },
        childFinally: [[propagate ? 'Cancelled' : 'Completed', 1, []]],
        work: propagate ? 0 : 1,
        stuck: [],
        parentAnomaliesOtherThanRefusals: [],
      });
    });
});
