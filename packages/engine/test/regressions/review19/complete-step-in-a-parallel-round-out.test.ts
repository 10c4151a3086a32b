import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';
import { applyRepairNow } from './apply-repair-now.ts';

/**
 * Review 19. run.complete_step on a branch of a ctx.parallel block whose round is out: both branches
 * are claimed and their actions still run in replay A. The operator completes branch 1 with a value
 * of their own (epoch + 1, a wake). The repair's wake replays the run (B): branch 1 is Completed,
 * branch 2 is Running under A, so B parks on it ("running on another worker"). Then A's branches
 * return: branch 1's late outcome is rejected, branch 2's is recorded on its own (a branch writes
 * alone). A is the replay that finishes the block last, the one that must carry the run on
 * (parallel-step.ts), but it read the steps before the repair: its next write is refused by the
 * epoch (ADR 0085) and it stops quietly. Is anything left to replay the run?
 *
 * Guarantees: the operator's value is what the history keeps, the late outcome is rejected once, and
 * the run is not left parked with nobody to wake it (invariant 3): once A and B have both returned,
 * the run is finished or a wake job for it is queued.
 *
 * Progress, not time: each branch's action awaits a gate the test opens; B is driven by the test.
 */
describe(`complete_step on a parallel branch whose round is out (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('the operator value is kept, the late outcome rejected, and the run is still driven to its end', async () => {
    const runs = { x: 0, y: 0, after: 0 };
    const x = { reached: gate(), release: gate() };
    const y = { reached: gate(), release: gate() };
    const branchX = defineAction({
      name: 'review19-round-x',
      run: async () => {
        runs.x += 1;
        x.reached.open();
        await x.release.promise;
        return 'worker-x';
      },
    });
    const branchY = defineAction({
      name: 'review19-round-y',
      run: async () => {
        runs.y += 1;
        y.reached.open();
        await y.release.promise;
        return 'worker-y';
      },
    });
    const after = defineAction({
      name: 'review19-round-after',
      run: async () => {
        runs.after += 1;
        return 'after';
      },
    });
    const flow = defineFlow({
      name: 'review19-complete-in-round',
      version: 1,
      run: async (ctx) => {
        const both = await ctx.parallel([ctx.action(branchX, null), ctx.action(branchY, null)]);
        return [both, await ctx.action(after, null)];
      },
    });
    const e = bareEngine(db, { flows: [flow], actions: [branchX, branchY, after] });
    const handedBack: { sequence: number; attempt: number; output: unknown }[] = [];
    e.events.on(
      'action.outcome_rejected',
      (ev) => void handedBack.push({ sequence: ev.sequence, attempt: ev.attempt, output: ev.output }),
    );
    const { runId } = await e.startFlow(flow, null);
    const liveA = executeRun(e.runtime, runId);
    await x.reached.promise;
    await y.reached.promise;
    await waitFor('both branches Running', async () => {
      const rows = await db.prisma.actionRun.findMany({ where: { run_id: runId, status: 'Running' } });
      return rows.length === 2 ? true : undefined;
    });

    const applied = await applyRepairNow(
      db,
      e,
      { kind: 'run.complete_step', runId, stepSequence: 1, output: 'operator-x' },
      'complete the branch by hand',
    );
    expect(applied.status).toBe('applied');
    // Every job queued so far is taken: the start's by A, the repair's wake by B below.
    const taken = await db.prisma.job.findMany({ where: { run_id: runId }, select: { id: true } });
    const lastTaken = taken.reduce((m, j) => (j.id > m ? j.id : m), 0n);

    // The repair's wake: replay B meets branch 2 held by A and parks on it.
    const b = await executeRun(e.runtime, runId);
    expect(b).toBe('parked');

    x.release.open();
    y.release.open();
    await liveA;

    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const rows = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    const wakes = await db.prisma.job.count({ where: { run_id: runId, kind: 'wake-run', id: { gt: lastTaken } } });
    const rejected = await db.prisma.anomalyLog.count({
      where: { run_id: runId, code: 'outcome_rejected', sequence: 1 },
    });
    const completedEvents = await db.prisma.flowEvent.count({
      where: { run_id: runId, type: 'action.completed', sequence: 1 },
    });
    const seen = {
      step1: [rows[0]?.status, rows[0]?.output],
      step2: rows[1]?.status,
      rejectedOnce: rejected,
      step1CompletedEvents: completedEvents,
      // The discarded result is handed to ActionOutcomeRejected, once.
      handedBack: [...handedBack],
      // Invariant 3: a run left open has something queued that will replay it.
      driven: run.finished_at !== null || wakes > 0,
      run: [run.status, run.waiting_for],
    };
    expect(seen).toEqual({
      ...seen,
      step1: ['Completed', 'operator-x'],
      step2: 'Completed',
      rejectedOnce: 1,
      step1CompletedEvents: 1,
      handedBack: [{ sequence: 1, attempt: 1, output: 'worker-x' }],
      driven: true,
    });

    // And driven once more, it ends on the operator's value with each action run once.
    if (run.finished_at === null) await executeRun(e.runtime, runId);
    const done = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect([done.status, done.output, runs]).toEqual([
      'Completed',
      [['operator-x', 'worker-y'], 'after'],
      { x: 1, y: 1, after: 1 },
    ]);
  });
});
