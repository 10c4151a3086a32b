import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow, type Engine } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';
import { drivenOn, recordOf } from './record.ts';

/**
 * Review 20. The operator's run.terminate while replay A is mid-round (both ctx.parallel branches
 * claimed, their actions running), while A stands between two back-to-back steps (a gate in the
 * flow's code, first replay only), and while a 'propagate' child of the run is mid-step. Designed:
 * the run ends Terminated at once, with no compensation; nothing is claimed or recorded after its
 * terminal event; a late outcome is turned away once (write_refused) and handed to the rejection
 * event; open 'propagate' children are terminated too; the audit row says applied.
 */
describe(`run.terminate while a round is out or between steps (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  async function terminate(e: Engine, runId: string) {
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    return e.repairs.apply({
      kind: 'run.terminate',
      target: { runId },
      expected: { runStatus: run.status as 'Running' },
      actor: 'review20@example.test',
      reason: 'review20: terminate mid-round',
      idempotencyKey: `review20-terminate-${runId}`,
    });
  }

  function rejectionsOf(e: Engine) {
    const seen: number[] = [];
    e.events.on('action.outcome_rejected', (ev) => {
      seen.push(ev.sequence);
    });
    return seen;
  }

  it('mid-round: both late outcomes are turned away once, nothing follows run.terminated', async () => {
    const log: string[] = [];
    const x = { reached: gate(), release: gate() };
    const y = { reached: gate(), release: gate() };
    const mk = (n: 'x' | 'y', g: typeof x) =>
      defineAction({
        name: `review20-term-${n}`,
        run: async () => {
          log.push(n);
          g.reached.open();
          await g.release.promise;
          return n;
        },
      });
    const bx = mk('x', x);
    const by = mk('y', y);
    const undo = defineAction({
      name: 'review20-term-undo',
      run: async (w: unknown) => (log.push(`undo-${String(w)}`), null),
    });
    const after = defineAction({ name: 'review20-term-after', run: async () => (log.push('after'), 'after') });
    const flow = defineFlow({
      name: 'review20-terminate-in-round',
      version: 1,
      run: async (ctx) => {
        const both = await ctx.parallel([
          ctx.action(bx, null).compensateWith(undo, () => 'x'),
          ctx.action(by, null).compensateWith(undo, () => 'y'),
        ]);
        return [both, await ctx.action(after, null)];
      },
    });
    const e = bareEngine(db, { flows: [flow], actions: [bx, by, undo, after] });
    const rejected = rejectionsOf(e);
    const { runId } = await e.startFlow(flow, null);
    const liveA = executeRun(e.runtime, runId);
    await x.reached.promise;
    await y.reached.promise;
    await waitFor('both branches Running', async () =>
      (await db.prisma.actionRun.count({ where: { run_id: runId, status: 'Running' } })) === 2 ? true : undefined,
    );
    expect((await terminate(e, runId)).status).toBe('applied');
    x.release.open();
    await waitFor('the rejection of branch 1', async () => (rejected.includes(1) ? true : undefined));
    y.release.open();
    await liveA;
    // Any wake left is a no-op on a finished run.
    expect(await executeRun(e.runtime, runId)).toBe('not-open');
    const rec = await recordOf(db, runId);
    expect({ ...rec, names: undefined, steps: undefined }).toEqual({
      ...rec,
      names: undefined,
      steps: undefined,
      run: { status: 'Terminated', open: false, error: 'Terminated' },
      compensations: [],
      duplicateStepOutcomes: [],
      ends: 1,
      afterTheEnd: [],
      rejected: [1, 2],
      audits: [['run.terminate', 'applied']],
    });
    expect(rec.steps.filter((s) => s[2] === 'Completed')).toEqual([]);
    expect(rejected.sort()).toEqual([1, 2]);
    expect(log.sort()).toEqual(['x', 'y']);
  });

  it('between two back-to-back steps: the owner claims nothing more', async () => {
    const log: string[] = [];
    const between = { reached: gate(), release: gate() };
    let entered = 0;
    const s1 = defineAction({ name: 'review20-termb-1', run: async () => (log.push('s1'), 's1') });
    const s2 = defineAction({ name: 'review20-termb-2', run: async () => (log.push('s2'), 's2') });
    const flow = defineFlow({
      name: 'review20-terminate-between',
      version: 1,
      run: async (ctx) => {
        entered += 1;
        const a = await ctx.action(s1, null);
        if (entered === 1) {
          between.reached.open();
          await between.release.promise;
        }
        return [a, await ctx.action(s2, null)];
      },
    });
    const e = bareEngine(db, { flows: [flow], actions: [s1, s2] });
    const { runId } = await e.startFlow(flow, null);
    const liveA = executeRun(e.runtime, runId);
    await between.reached.promise;
    expect((await terminate(e, runId)).status).toBe('applied');
    between.release.open();
    await liveA;
    const rec = await recordOf(db, runId);
    // Step 1's outcome was buffered by A (it rides on the next transaction): the terminate came first,
    // so it is turned away once, and step 2 is never claimed.
    expect({ ...rec, names: undefined }).toEqual({
      ...rec,
      names: undefined,
      run: { status: 'Terminated', open: false, error: 'Terminated' },
      ends: 1,
      afterTheEnd: [],
      duplicateStepOutcomes: [],
      audits: [['run.terminate', 'applied']],
    });
    expect([rec.steps, rec.rejected]).toEqual([[[1, 'action', 'Running', 1]], [1]]);
    expect(log).toEqual(['s1']);
  });

  it("a 'propagate' child mid-step is terminated with its parent; its late outcome is turned away once", async () => {
    const log: string[] = [];
    const c = { reached: gate(), release: gate() };
    const work = defineAction({
      name: 'review20-termc-work',
      run: async () => {
        log.push('child-work');
        c.reached.open();
        await c.release.promise;
        return 'w';
      },
    });
    const childFlow = defineFlow({
      name: 'review20-terminate-child',
      version: 1,
      run: async (ctx) => [await ctx.action(work, null), await ctx.action(work, null)],
    });
    const parent = defineFlow({
      name: 'review20-terminate-parent',
      version: 1,
      run: async (ctx) => ctx.child(childFlow, null),
    });
    const e = bareEngine(db, { flows: [parent, childFlow], actions: [work] });
    const rejected = rejectionsOf(e);
    const { runId } = await e.startFlow(parent, null);
    expect(await executeRun(e.runtime, runId)).toBe('parked');
    const child = await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: runId } });
    const liveChild = executeRun(e.runtime, child.id);
    await c.reached.promise;
    expect((await terminate(e, runId)).status).toBe('applied');
    c.release.open();
    await liveChild;
    expect(await drivenOn(db, e, child.id)).toBe(true);
    const parentRec = await recordOf(db, runId);
    const childRec = await recordOf(db, child.id);
    expect({
      parent: [parentRec.run, parentRec.ends, parentRec.afterTheEnd],
      child: [childRec.run.status, childRec.run.open, childRec.ends, childRec.afterTheEnd, childRec.rejected],
      steps: childRec.steps.map((s) => [s[0], s[2]]),
    }).toEqual({
      parent: [{ status: 'Terminated', open: false, error: 'Terminated' }, 1, []],
      child: ['Terminated', false, 1, [], [1]],
      steps: [[1, 'Running']],
    });
    expect(rejected).toEqual([1]);
    expect(log).toEqual(['child-work']);
  });
});
