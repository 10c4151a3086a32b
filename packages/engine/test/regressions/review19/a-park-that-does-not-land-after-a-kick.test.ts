import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { bareEngine, gate } from '../harness.ts';
import { applyRepairNow } from './apply-repair-now.ts';

/**
 * Review 19, nearby. A kick between two steps (no row Running) starts a second replay (B) next to the
 * owner (A). A claims step 3 first; B meets it Running and parks, its park landing ("step 3 is running
 * on another worker ... reclaim is off ... the run waits for an operator"). A then finishes step 3 and
 * reaches ctx.awaitSignal: the wait's row, event and deadline wake are written (carrying step 3's
 * outcome), but A's park is conditional on the run version A last wrote, which B's load and park moved
 * on, so it does not land, and A queues no wake (it carried nothing left to write).
 *
 * Guarantee (invariant 3; the console must say why a run waits): once both replays returned, the run's
 * waiting_for says what it waits for now (the signal), not a step that is Completed, or a wake due
 * now is queued whose replay will say so; and the run still ends once the signal comes.
 */
describe(`a park that does not land after a kick (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it("the run's waiting_for names the signal it waits for, not a step that is Completed", async () => {
    const between = { reached: gate(), release: gate() };
    const step3 = { reached: gate(), release: gate() };
    let entered = 0;
    let s3runs = 0;
    const p1 = defineAction({ name: 'review19-park-p1', run: async () => 'p1' });
    const p2 = defineAction({ name: 'review19-park-p2', run: async () => 'p2' });
    const s3 = defineAction({
      name: 'review19-park-s3',
      run: async () => {
        s3runs += 1;
        step3.reached.open();
        await step3.release.promise;
        return 's3';
      },
    });
    const flow = defineFlow({
      name: 'review19-park-after-kick',
      version: 1,
      run: async (ctx) => {
        entered += 1;
        const mine = entered;
        const both = await ctx.parallel([ctx.action(p1, null), ctx.action(p2, null)]);
        if (mine === 1) {
          between.reached.open();
          await between.release.promise;
        }
        const three = await ctx.action(s3, null);
        const go = await ctx.awaitSignal<string>('go', { timeoutSeconds: 3600 });
        return [both, three, go];
      },
    });
    const e = bareEngine(db, { flows: [flow], actions: [p1, p2, s3] });
    const { runId } = await e.startFlow(flow, null);
    const liveA = executeRun(e.runtime, runId);
    await between.reached.promise;
    expect((await applyRepairNow(db, e, { kind: 'run.kick', runId }, 'kick between two steps')).status).toBe('applied');
    // The jobs due now are taken: the start's by A, the kick's by B below.
    await db.prisma.job.deleteMany({ where: { run_id: runId, available_at: { lte: e.runtime.clock.now() } } });
    between.release.open();
    await step3.reached.promise;
    expect(await executeRun(e.runtime, runId)).toBe('parked');
    step3.release.open();
    expect(await liveA).toBe('parked');

    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const rows = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    const dueNow = await db.prisma.job.count({
      where: { run_id: runId, kind: 'wake-run', available_at: { lte: e.runtime.clock.now() } },
    });
    expect({
      steps: rows.map((r) => [r.sequence, r.kind, r.status]),
      run: [run.status, run.stuck_reason],
      // Right now, or once a wake already queued replays it (nothing else comes before the signal).
      waitingForNamesTheSignal: /signal "go"/.test(run.waiting_for ?? '') || dueNow > 0,
      waitingFor: run.waiting_for,
    }).toEqual({
      steps: [
        [1, 'action', 'Completed'],
        [2, 'action', 'Completed'],
        [3, 'action', 'Completed'],
        [4, 'signal', 'Waiting'],
      ],
      run: ['Waiting', null],
      waitingForNamesTheSignal: true,
      waitingFor: run.waiting_for,
    });

    // The signal still ends it (its wake replays the run), with step 3 run once.
    await e.signal(runId, 'go', 'yes');
    await executeRun(e.runtime, runId);
    const done = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect([done.status, done.output, s3runs]).toEqual(['Completed', [['p1', 'p2'], 's3', 'yes'], 1]);
  });
});
