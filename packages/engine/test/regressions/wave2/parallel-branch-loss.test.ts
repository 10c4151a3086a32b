import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow, NonRetryableError } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate, within } from '../harness.ts';

/**
 * Issue 13, item 1. One branch of a parallel block (or of a parallel rollback level) loses its claim
 * (the monitor expired it while it ran); its siblings finished. The siblings' results must stand on
 * their own: recorded Completed exactly once, and the run carried on to its policy outcome, never
 * left Waiting with a Running row nobody holds.
 */
const log: string[] = [];
const slowGate = gate();
const undoGate = gate();
const slow = defineAction({
  name: 'slow',
  run: async () => {
    log.push('slow started');
    await slowGate.promise;
    return 'slow';
  },
});
const fast = defineAction({ name: 'fast', run: async () => (log.push('fast'), 'fast') });
const actionsFlow = defineFlow({
  name: 'parallel-branch-loss',
  version: 1,
  run: async (ctx) => ctx.parallel([ctx.action(slow, null).expiresIn(1), ctx.action(fast, null)]),
});

const book = (name: string) => defineAction({ name, run: async () => ({ id: name }) });
const bookSlow = book('book-slow');
const bookFast = book('book-fast');
const undoSlow = defineAction({
  name: 'undo-slow',
  run: async () => {
    log.push('undo-slow started');
    await undoGate.promise;
    return null;
  },
});
const undoFast = defineAction({ name: 'undo-fast', run: async () => (log.push('undo-fast'), null) });
const decline = defineAction({
  name: 'decline',
  run: async () => {
    throw new NonRetryableError('declined');
  },
});
const rollbackFlow = defineFlow({
  name: 'parallel-rollback-loss',
  version: 1,
  run: async (ctx) => {
    try {
      await ctx.action(bookSlow, null).compensateWith(undoSlow, () => null);
      await ctx.action(bookFast, null).compensateWith(undoFast, () => null);
      await ctx.action(decline, null);
      return null;
    } catch (err) {
      await ctx.compensate({ parallel: true });
      throw err;
    }
  },
});

const flows = [actionsFlow, rollbackFlow];
const actions = [slow, fast, bookSlow, bookFast, undoSlow, undoFast, decline];

describe(`wave 2: a parallel branch that loses its claim does not take its siblings' results with it (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    slowGate.open();
    undoGate.open();
    await db.close();
  });

  const runOf = (runId: string) => db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
  const terminal = (runId: string) =>
    waitFor(
      'the run to finish',
      async () => {
        const r = await runOf(runId);
        return ['Pending', 'Running', 'Waiting', 'Compensating'].includes(r.status) ? undefined : r;
      },
      60_000,
    );

  it("parallel actions: the fast branch's outcome is recorded once and the run ends Failed after the slow branch expired", async () => {
    const clock = new TestClock();
    const e = bareEngine(db, { flows, actions, clock });
    const { runId } = await e.startFlow(actionsFlow, null);
    await db.prisma.job.deleteMany({ where: { run_id: runId } });
    const step = (name: string) => db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, name } });

    const first = executeRun(e.runtime, runId);
    await waitFor('fast done while slow runs', async () =>
      log.includes('slow started') && log.includes('fast') ? true : undefined,
    );
    clock.advance(2_000);
    expect((await e.sweepExpiredSteps()).expired).toBe(1); // slow: Expired, its run woken
    // The monitor's wake meets the block while the first replay still holds the slow branch.
    await executeRun(e.runtime, runId);
    slowGate.open(); // the slow branch finishes late: its outcome is rejected
    expect(await within(first, 30_000)).not.toBe('timeout');

    e.startWorkers();
    const run = await terminal(runId);
    await e.stopWorkers();
    const completedEvents = await db.prisma.flowEvent.count({
      where: { run_id: runId, type: 'action.completed', row_id: (await step('fast')).id },
    });
    const lost = await db.prisma.anomalyLog.count({
      where: { run_id: runId, name: 'slow', code: { in: ['outcome_rejected', 'write_refused'] } },
    });
    expect({
      run: run.status,
      fast: (await step('fast')).status,
      slow: (await step('slow')).status,
      fastRan: log.filter((l) => l === 'fast').length,
      completedEvents,
      lost,
    }).toEqual({ run: 'Failed', fast: 'Completed', slow: 'Expired', fastRan: 1, completedEvents: 1, lost: 1 });
  }, 120_000);

  it('parallel rollback: the fast compensation is recorded once, the run shows Compensating while the slow one runs, and the rollback finishes', async () => {
    const clock = new TestClock();
    const e = bareEngine(db, {
      flows,
      actions,
      clock,
      config: { monitor: { expiration: { defaults: { compensation: 1 } } } },
    });
    const { runId } = await e.startFlow(rollbackFlow, null);
    await db.prisma.job.deleteMany({ where: { run_id: runId } });
    const comp = (name: string) => db.prisma.compensationRun.findFirstOrThrow({ where: { run_id: runId, name } });

    const first = executeRun(e.runtime, runId);
    await waitFor('undo-fast recorded Completed while undo-slow runs', async () =>
      log.includes('undo-slow started') &&
      (await db.prisma.compensationRun.findFirst({ where: { run_id: runId, name: 'undo-fast' } }))?.status ===
        'Completed'
        ? true
        : undefined,
    );
    // A duplicate delivery meets the level mid-rollback: it parks, and the run says it is compensating.
    expect(await executeRun(e.runtime, runId)).toBe('parked');
    const mid = await runOf(runId);
    expect({ status: mid.status, stuck: mid.stuck_reason }).toEqual({ status: 'Compensating', stuck: null });

    clock.advance(2_000);
    expect((await e.sweepExpiredSteps()).expired).toBe(1); // undo-slow: Expired
    undoGate.open();
    expect(await within(first, 30_000)).not.toBe('timeout');

    e.startWorkers();
    const run = await terminal(runId);
    await e.stopWorkers();
    const completedEvents = await db.prisma.flowEvent.count({
      where: { run_id: runId, type: 'compensation.completed', row_id: (await comp('undo-fast')).id },
    });
    expect({
      run: run.status,
      undoFast: (await comp('undo-fast')).status,
      undoSlow: (await comp('undo-slow')).status,
      undoFastRan: log.filter((l) => l === 'undo-fast').length,
      completedEvents,
      error: (run.error as { code?: string } | null)?.code,
    }).toEqual({
      run: 'Failed',
      undoFast: 'Completed',
      undoSlow: 'Expired',
      undoFastRan: 1,
      completedEvents: 1,
      error: 'compensation_unfinished',
    });
  }, 120_000);
});
