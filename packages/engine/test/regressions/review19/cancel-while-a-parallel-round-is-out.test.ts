import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { isFlowError } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { parallelRoundOut } from './parallel-round-out.ts';

/**
 * Review 19, nearby. The same shape as complete_step against a round that is out, with a cancellation
 * in place of the repair: both branches of a ctx.parallel block are claimed and running in replay A
 * when the run is cancelled (cleanup window 10 minutes). The cancel's wake replays the run (B): both
 * branches are Running under A, so B parks on them. A's branches return and are recorded on their own;
 * A is the replay that finishes the block last and must carry the run on, but it has not seen the
 * cancellation: its next step's claim is refused ("a forward step must not start behind a
 * cancellation this replay has not seen") and it stops quietly, queueing nothing.
 *
 * Guarantee: the cancellation is delivered within its cleanup window and the branches' compensations
 * run (ARCHITECTURE: compensation on a deadline the business sets); in progress terms, once A and B
 * have returned, the run is finished or a wake due now is queued (the only wake left is the one at the
 * window's close, which ends the run Cancelled with nothing undone).
 */
describe(`cancel while a parallel round is out (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('the replay that finishes the block last hands the run on, and the compensations run in the window', async () => {
    const { e, runId, x, y, liveA, log } = await cancelledWithTheRoundOut(db, 'driven');
    x.release.open();
    y.release.open();
    await liveA;

    const now = e.runtime.clock.now();
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const dueNow = await db.prisma.job.count({
      where: { run_id: runId, kind: 'wake-run', available_at: { lte: now } },
    });
    const seen = {
      driven: run.finished_at !== null || dueNow > 0,
      run: [run.status, run.waiting_for],
      log: [...log],
    };
    expect(seen).toEqual({ ...seen, driven: true });

    // Driven on within the window: the cancellation is delivered and both branches are undone.
    for (let i = 0; i < 4; i++) {
      const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      if (r.finished_at !== null) break;
      await executeRun(e.runtime, runId);
    }
    const done = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect([done.status, log.filter((l) => l.startsWith('undo')).sort(), log.includes('after')]).toEqual([
      'Cancelled',
      ['undo-x', 'undo-y'],
      false,
    ]);
  });

  it('left to the wakes it has, the run closes at the end of its window with nothing undone', async () => {
    const { e, runId, x, y, liveA, log, clock } = await cancelledWithTheRoundOut(db, 'window');
    x.release.open();
    y.release.open();
    await liveA;
    // What a worker pool would do from here: run each queued wake when it comes due, in order.
    for (let i = 0; i < 6; i++) {
      const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      if (r.finished_at !== null) break;
      const next = await db.prisma.job.findFirst({
        where: { run_id: runId, kind: 'wake-run' },
        orderBy: { available_at: 'asc' },
      });
      if (!next) break;
      await db.prisma.job.delete({ where: { id: next.id } });
      if (next.available_at.getTime() > clock.now().getTime()) clock.set(next.available_at);
      await executeRun(e.runtime, runId);
    }
    const done = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const compensations = await db.prisma.compensationRun.count({ where: { run_id: runId } });
    // Expected: cancelled within the window with both branches undone. Observed on main: the window's
    // close ends it (CleanupWindowClosed), no compensation row, nothing undone.
    const seen = {
      status: done.status,
      error: (done.error as { name?: string } | null)?.name ?? null,
      compensations,
      undone: log.filter((l) => l.startsWith('undo')).sort(),
    };
    expect(seen).toEqual({ ...seen, status: 'Cancelled', compensations: 2, undone: ['undo-x', 'undo-y'] });
    expect(seen.error).not.toBe('CleanupWindowClosed');
  });
});

/** Replay A holds both branches, the run is cancelled, and B (the cancel's wake) has parked on them. */
async function cancelledWithTheRoundOut(db: Database, tag: string) {
  const { e, runId, x, y, liveA, log, clock } = await parallelRoundOut(db, {
    tag: `review19-cancel-${tag}`,
    compensateOn: (err) => isFlowError(err, 'cancelled'),
  });

  await e.cancel(runId, { reason: 'review19: customer left', cleanupSeconds: 600 });
  // The jobs due now are taken: the start's by A, the cancel's by B below. The wake at the window's
  // close stays queued.
  await db.prisma.job.deleteMany({ where: { run_id: runId, available_at: { lte: clock.now() } } });
  // The cancel's wake: replay B meets both branches held by A and parks.
  expect(await executeRun(e.runtime, runId)).toBe('parked');
  return { e, runId, x, y, liveA, log, clock };
}
