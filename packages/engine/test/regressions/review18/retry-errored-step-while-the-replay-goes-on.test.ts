import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';
import { applyStepRepairNow } from './apply-step-repair-now.ts';

/**
 * Review 18. run.retry_step on an Errored step is allowed while no later step is recorded: it puts
 * the step back to Pending with one more attempt, wakes the run, and its audit row says applied.
 * A parallel branch's outcome is written at once (its own transaction), so the replay that ran it
 * is still live, its other branch still running, when the operator sees the branch Errored and
 * retries it. Once the other branch returns, the block rethrows the error it holds in memory, the
 * code catches it and goes on: its next step's transition and its finish are gated on "the run is open" (and the
 * finish on the run row's version), and retry_step writes neither. Does the run end with the
 * retried step still Pending, the retry never run?
 *
 * Progress, not time: the slow branch's action awaits a gate the test opens once the repair returned
 * (nothing in the flow's own code waits: this is what a slow sibling does).
 */
describe(`retry_step on an Errored step while the replay that recorded it goes on (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('the run does not finish over the retried step: the retry runs, once, before the run ends', async () => {
    let tries = 0;
    const between = { reached: gate(), release: gate() };
    const flaky = defineAction({
      name: 'review18-retry-flaky',
      run: async () => {
        tries += 1;
        if (tries === 1) throw new Error('first try fails');
        return 'ok';
      },
    });
    // The block's other branch: still running (its action awaits the test) when the operator acts.
    const slow = defineAction({
      name: 'review18-retry-slow',
      run: async () => {
        if (tries <= 1) {
          between.reached.open();
          await between.release.promise;
        }
        return 'slow';
      },
    });
    const after = defineAction({ name: 'review18-retry-after', run: async () => 'after' });
    const flow = defineFlow({
      name: 'review18-retry-errored',
      version: 1,
      run: async (ctx) => {
        let first: string[];
        try {
          first = await ctx.parallel([ctx.action(slow, null), ctx.action(flaky, null)]);
        } catch {
          first = ['caught'];
        }
        return [first, await ctx.action(after, null)];
      },
    });
    const e = bareEngine(db, { flows: [flow], actions: [slow, flaky, after] });
    const { runId } = await e.startFlow(flow, null);
    const live = executeRun(e.runtime, runId);
    await between.reached.promise;
    // The flaky branch (step 2) has its error written on its own (a branch's outcome is made durable at once).
    await waitFor('the flaky branch to be Errored', async () => {
      const row = await db.prisma.actionRun.findFirst({ where: { run_id: runId, sequence: 2 } });
      return row?.status === 'Errored' ? true : undefined;
    });
    const applied = await applyStepRepairNow(
      db,
      e,
      'run.retry_step',
      { runId, stepSequence: 2 },
      'retry the errored branch',
    );
    expect(applied.status).toBe('applied');
    const retriedAt = (
      await db.prisma.flowEvent.findFirstOrThrow({ where: { run_id: runId, type: 'action.retry_requested' } })
    ).id;

    between.release.open();
    await live;

    const ended = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const rows = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    const later = await db.prisma.flowEvent.findMany({
      where: { run_id: runId, id: { gt: retriedAt } },
      orderBy: { id: 'asc' },
    });
    // Guarantee: an applied repair's effect is not lost. Either the run is still open (the retry to
    // come), or, if it ended, step 2 was retried first; never a finished run with step 2 left Pending.
    const seen = {
      finishedWithStep2Pending: ended.finished_at !== null && rows[1]?.status === 'Pending',
      run: [ended.status, ended.finished_at === null ? 'open' : 'finished', ended.output],
      steps: rows.map((r) => [r.sequence, r.status, r.attempts]),
      eventsAfterRetry: later.map((ev) => (ev.sequence === null ? ev.type : `${ev.type}#${ev.sequence}`)),
    };
    expect(seen).toEqual({ ...seen, finishedWithStep2Pending: false });

    // Drive it to the end: the retried branch runs once more and the run ends with its value.
    for (let i = 0; i < 4 && ended.finished_at === null; i++) await executeRun(e.runtime, runId);
    const done = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect([done.status, done.output, tries]).toEqual(['Completed', [['slow', 'ok'], 'after'], 2]);
  });
});
