import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';
import { applyRepairNow } from './apply-repair-now.ts';

/**
 * Review 19. run.retry_step on a Failed parallel branch (its retry an hour away) while its sibling's
 * action still runs in replay A: the operator makes the retry due now (epoch + 1, a wake). The
 * repair's wake replays the run (B): B runs the retry, which succeeds and is recorded at once, and
 * parks on the sibling A still holds. Then the sibling returns in A: recorded on its own. A is the
 * replay that finishes the block last, but it read the steps before the repair, so the epoch stops
 * it (ADR 0085) without a wake. Is the run left waiting an hour (the old retry's wake) for nothing?
 *
 * Guarantee (invariant 3, and a repair's effect is not lost): once A and B have both returned, the
 * run is finished or a wake due now is queued; driven on, it ends with the retried branch's value.
 */
describe(`retry_step on a parallel branch whose round is out (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('after the retry and the sibling are recorded, the run is woken now, not at the old retry time', async () => {
    let tries = 0;
    let slowRuns = 0;
    const y = { reached: gate(), release: gate() };
    const flaky = defineAction({
      name: 'review19-retry-round-flaky',
      retry: { maxAttempts: 3, backoff: { initialMs: 3_600_000, maxMs: 3_600_000, jitter: false } },
      run: async () => {
        tries += 1;
        if (tries === 1) throw new Error('first try fails');
        return 'retried';
      },
    });
    const slow = defineAction({
      name: 'review19-retry-round-slow',
      run: async () => {
        slowRuns += 1;
        y.reached.open();
        await y.release.promise;
        return 'slow';
      },
    });
    const flow = defineFlow({
      name: 'review19-retry-in-round',
      version: 1,
      run: async (ctx) => ctx.parallel([ctx.action(flaky, null), ctx.action(slow, null)]),
    });
    const e = bareEngine(db, { flows: [flow], actions: [flaky, slow] });
    const { runId } = await e.startFlow(flow, null);
    const liveA = executeRun(e.runtime, runId);
    await y.reached.promise;
    await waitFor('the flaky branch to be Failed (retry scheduled)', async () => {
      const row = await db.prisma.actionRun.findFirst({ where: { run_id: runId, sequence: 1 } });
      return row?.status === 'Failed' ? true : undefined;
    });

    const applied = await applyRepairNow(
      db,
      e,
      { kind: 'run.retry_step', runId, stepSequence: 1 },
      'retry the failed branch now',
    );
    expect(applied.status).toBe('applied');
    const taken = await db.prisma.job.findMany({ where: { run_id: runId }, select: { id: true } });
    const lastTaken = taken.reduce((m, j) => (j.id > m ? j.id : m), 0n);

    // The repair's wake: B runs the retry and parks on the sibling A holds.
    expect(await executeRun(e.runtime, runId)).toBe('parked');
    const step1 = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 1 } });
    expect([step1.status, step1.output, step1.attempts]).toEqual(['Completed', 'retried', 2]);

    y.release.open();
    await liveA;

    const now = e.runtime.clock.now();
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const rows = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    const dueNow = await db.prisma.job.count({
      where: { run_id: runId, kind: 'wake-run', id: { gt: lastTaken }, available_at: { lte: now } },
    });
    const seen = {
      steps: rows.map((r) => [r.sequence, r.status]),
      driven: run.finished_at !== null || dueNow > 0,
      run: [run.status, run.waiting_for],
    };
    expect(seen).toEqual({
      ...seen,
      steps: [
        [1, 'Completed'],
        [2, 'Completed'],
      ],
      driven: true,
    });

    if (run.finished_at === null) await executeRun(e.runtime, runId);
    const done = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect([done.status, done.output, tries, slowRuns]).toEqual(['Completed', ['retried', 'slow'], 2, 1]);
  });
});
