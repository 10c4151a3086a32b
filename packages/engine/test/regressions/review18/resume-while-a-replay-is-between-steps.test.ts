import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow, type Engine } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';
import { applyStepRepairNow } from './apply-step-repair-now.ts';

/**
 * Review 18. resume_from_step forgets steps N.. under the run's lock and promises that "the next
 * replay runs step N and what follows with the code deployed now". A replay that loaded the run's
 * record BEFORE the repair and is between two steps (its flow code awaiting something, the
 * previous step's outcome already written) then schedules its next step: the step transition's gate
 * only asks "is the run open, is its cancellation known". Does the stale replay write a step (and run
 * its action on the forgotten step's output) after the repair committed?
 *
 * Progress, not time: the flow's code awaits a gate the test opens only once the repair returned.
 */
/**
 * Replays the run once (it parks on its signal `go`), signals it, and starts a second replay that stops
 * at the flow's gate (`between`, armed here): the replay that read the record before the repair.
 */
async function staleReplayAtItsGate(
  e: Engine,
  runId: string,
  between: { armed: boolean; reached: ReturnType<typeof gate> },
): Promise<{ stale: Promise<unknown> }> {
  expect(await executeRun(e.runtime, runId)).toBe('parked');
  await e.signal(runId, 'go');
  between.armed = true;
  const stale = executeRun(e.runtime, runId);
  await between.reached.promise;
  // Wrapped: an async function returning the promise itself would wait for it, and it waits for the test.
  return { stale };
}

describe(`resume_from_step while a replay that loaded the old record is between two steps (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('the stale replay writes nothing after the repair, and the run ends on the re-run first step', async () => {
    let firsts = 0;
    const seconds: unknown[] = [];
    const between = { armed: false, reached: gate(), release: gate() };
    const first = defineAction({ name: 'review18-resume-first', run: async () => `A${++firsts}` });
    const second = defineAction({
      name: 'review18-resume-second',
      run: async (a: string) => {
        seconds.push(a);
        return `B(${a})`;
      },
    });
    const flow = defineFlow({
      name: 'review18-resume-between-steps',
      version: 1,
      run: async (ctx) => {
        const a = await ctx.action(first, null);
        await ctx.awaitSignal('go', { timeoutSeconds: 3600 });
        if (between.armed) {
          between.armed = false;
          between.reached.open();
          await between.release.promise;
        }
        const b = await ctx.action(second, a);
        return [a, b];
      },
    });
    const e = bareEngine(db, { flows: [flow], actions: [first, second] });
    const { runId } = await e.startFlow(flow, null);
    // Replay 1: step 1 runs (A1), the run parks on its signal. Replay 2 loads the record (step 1 = A1),
    // takes the signal, and stops between the two steps.
    const { stale } = await staleReplayAtItsGate(e, runId, between);
    const applied = await applyStepRepairNow(
      db,
      e,
      'run.resume_from_step',
      { runId, stepSequence: 1 },
      'resume from step 1',
    );
    expect(applied.status).toBe('applied');
    // The repair's own events (run.resumed_from_step, then repair.applied) end here: the stale replay
    // is held at its gate, so nothing else wrote since.
    const resumedAt = (
      await db.prisma.flowEvent.findFirstOrThrow({ where: { run_id: runId }, orderBy: { id: 'desc' } })
    ).id;

    // The stale replay goes on from where it stood.
    between.release.open();
    await stale;

    // Guarantee: nothing the stale replay decided from the forgotten record lands after the repair.
    const after = await db.prisma.flowEvent.findMany({
      where: { run_id: runId, id: { gt: resumedAt } },
      orderBy: { id: 'asc' },
    });
    const rows = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    const ended = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect({
      runEndedByStaleReplay: ended.finished_at === null ? null : [ended.status, ended.output],
      secondRanWith: seconds,
      stepsAfterRepair: rows.map((r) => [r.sequence, r.kind, r.name, r.status]),
      eventsAfterRepair: after.map((ev) => (ev.sequence === null ? ev.type : `${ev.type}#${ev.sequence}`)),
    }).toEqual({ runEndedByStaleReplay: null, secondRanWith: [], stepsAfterRepair: [], eventsAfterRepair: [] });

    // And the repair's promise: the next replays run step 1 again and step 2 on ITS output.
    await executeRun(e.runtime, runId);
    await executeRun(e.runtime, runId);
    const done = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect([done.status, done.output]).toEqual(['Completed', ['A2', 'B(A2)']]);
  });
  it('a stale replay about to finish: the run does not end on the forgotten record', async () => {
    let firsts = 0;
    const between = { armed: false, reached: gate(), release: gate() };
    const only = defineAction({ name: 'review18-resume-finish-only', run: async () => `A${++firsts}` });
    const flow = defineFlow({
      name: 'review18-resume-before-finish',
      version: 1,
      run: async (ctx) => {
        const a = await ctx.action(only, null);
        await ctx.awaitSignal('go', { timeoutSeconds: 3600 });
        if (between.armed) {
          between.armed = false;
          between.reached.open();
          await between.release.promise;
        }
        return a;
      },
    });
    const e = bareEngine(db, { flows: [flow], actions: [only] });
    const { runId } = await e.startFlow(flow, null);
    const { stale } = await staleReplayAtItsGate(e, runId, between);
    const applied = await applyStepRepairNow(
      db,
      e,
      'run.resume_from_step',
      { runId, stepSequence: 1 },
      'resume from step 1 before the finish',
    );
    expect(applied.status).toBe('applied');
    between.release.open();
    await stale;

    const ended = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const steps = await db.prisma.actionRun.count({ where: { run_id: runId } });
    // The repair promised a re-run of step 1; a run that ends now ends with none of its steps recorded.
    expect({ ended: ended.finished_at === null ? null : [ended.status, ended.output], steps }).toEqual({
      ended: null,
      steps: 0,
    });
  });
  it('resume_from_step on a parallel branch whose sibling still runs: the live replay does not finish on the forgotten branch', async () => {
    let quicks = 0;
    const sibling = { reached: gate(), release: gate() };
    const slow = defineAction({
      name: 'review18-resume-par-slow',
      run: async () => {
        if (quicks <= 1) {
          sibling.reached.open();
          await sibling.release.promise;
        }
        return 'slow';
      },
    });
    const quick = defineAction({ name: 'review18-resume-par-quick', run: async () => `Q${++quicks}` });
    const after = defineAction({ name: 'review18-resume-par-after', run: async (q: string) => `after(${q})` });
    const flow = defineFlow({
      name: 'review18-resume-parallel',
      version: 1,
      run: async (ctx) => {
        const [s, q] = await ctx.parallel([ctx.action(slow, null), ctx.action(quick, null)]);
        return [s ?? null, q ?? null, (await ctx.action(after, q ?? '')) ?? null];
      },
    });
    const e = bareEngine(db, { flows: [flow], actions: [slow, quick, after] });
    const { runId } = await e.startFlow(flow, null);
    const live = executeRun(e.runtime, runId);
    await sibling.reached.promise;
    // The quick branch (step 2) is recorded on its own while the slow one (step 1) still runs.
    await waitFor('the quick branch to be recorded', async () => {
      const row = await db.prisma.actionRun.findFirst({ where: { run_id: runId, sequence: 2 } });
      return row?.status === 'Completed' ? true : undefined;
    });
    const applied = await applyStepRepairNow(
      db,
      e,
      'run.resume_from_step',
      { runId, stepSequence: 2 },
      'run the quick branch again',
    );
    expect(applied.status).toBe('applied');
    sibling.release.open();
    await live;

    const ended = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const rows = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    // The repair forgot step 2 so that it runs again; the run must not end on the forgotten Q1.
    expect({
      ended: ended.finished_at === null ? null : [ended.status, ended.output],
      steps: rows.map((r) => [r.sequence, r.name.replace('review18-resume-par-', ''), r.status]),
    }).toEqual({ ended: null, steps: [[1, 'slow', 'Completed']] });
  });
});
