import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import type { Json } from '../../../src/definitions/define-action.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { bareEngine, gate } from '../harness.ts';
import { recordOf } from '../review20/record.ts';
import { anomaliesOf, driveTree, judgeTree } from '../review25/support/tree.ts';
import { heldDriver } from './support/held-driver.ts';

/**
 * Review 26 (ADR 0094: "a start that queues behind the finish's lock finds the run closed and writes nothing").
 * A parent asks for child C from the continuation of a step it did not await and returns. Schedule (gates): the
 * one-statement finish is held before it is sent; x is let go and C is asked for, its start transaction held
 * before it begins (C is asked for, nothing of it is written yet); the finish is sent and the replay ends; then
 * C's start goes on, after the parent's end, and the test waits for its transaction to settle.
 *
 * Guarantees: the start after the end writes nothing (no child run, no step, nothing after the parent's terminal
 * event but journaled refusals); the parent ends once; nothing is left open with nothing to wake it.
 */
describe(`a child's start that begins after the one-statement finish committed (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  let n = 0;
  for (const policy of ['propagate', 'abandon'] as const)
    it(`a '${policy}' child asked for before the finish was sent, started after it committed`, async () => {
      n += 1;
      const tag = `r26-after-${n}`;
      const ran: Record<string, number> = {};
      const count = (k: string) => (ran[k] = (ran[k] ?? 0) + 1);
      const xRuns = gate();
      const xGo = gate();
      const book = defineAction({ name: `${tag}-book`, run: async () => (count('book'), 'b') });
      const x = defineAction({
        name: `${tag}-x`,
        run: async () => {
          count('x');
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
          return 'done';
        },
      });
      const e = bareEngine(db, { clock: new TestClock(), flows: [parent, childC], actions: [book, x, work] });
      const { runId } = await e.startFlow(parent, null);
      await db.prisma.job.deleteMany({ where: { run_id: runId } });
      const held = heldDriver(e.runtime, () => runId);

      const live = executeRun(held.deps, runId);
      await held.finish.reached;
      held.beforeBegin.arm();
      xGo.open();
      await held.beforeBegin.reached;
      held.finish.release();
      const outcome = await live;
      const atEnd = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      held.beforeBegin.release();
      await held.beforeBegin.done;
      await driveTree(db, e, runId);

      const p = await recordOf(db, runId);
      const tree = await judgeTree(db, runId);
      expect({
        outcome,
        finishStatement: held.finish.results,
        parentAtEnd: atEnd.status,
        parent: { status: p.run.status, ends: p.ends, afterTheEnd: p.afterTheEnd },
        children: await db.prisma.flowRun.count({ where: { parent_run_id: runId } }),
        childSteps: await db.prisma.actionRun.count({ where: { run_id: runId, kind: 'child' } }),
        work: ran.work ?? 0,
        stuck: tree.filter((t) => t.stuck !== null),
        parentAnomaliesOtherThanRefusals: (await anomaliesOf(db, runId)).filter(
          (a) => !/^(write_refused|outcome_rejected)#/.test(a),
        ),
      }).toEqual({
        outcome: 'finished',
        finishStatement: [['Completed']],
        parentAtEnd: 'Completed',
        parent: { status: 'Completed', ends: 1, afterTheEnd: [] },
        children: 0,
        childSteps: 0,
        work: 0,
        stuck: [],
        parentAnomaliesOtherThanRefusals: [],
      });
    });
});
