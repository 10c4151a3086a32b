import { describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../../../src/index.ts';
import type { TestEngine } from '../../../src/testing/create-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { gate } from '../harness.ts';
import { announceJob, finished, useEngineWithPool } from './use-engine-with-pool.ts';

/**
 * ADR 0048: the start writes step 1 already claimed, and the pool's replay runs its action without
 * a claim of its own, so nothing between the start's commit and the action reads the run again. A
 * terminate, the run timeout or a cancel committed in that gap (the caller has its run id) must still meet the
 * outcome's fence: nothing of the run commits after its terminal event, and each step's history is
 * written once, in order. And the run must move on: the replay the cancellation woke parks on step 1
 * as running elsewhere, so the replay that records step 1's outcome is the only one left to wake it
 * (its own park no longer lands: the run was written since). It left no wake, and the run waited
 * for the cancel's cleanup window to close (test failing before).
 */
const held = new Map<string, ReturnType<typeof gate>>();
const entered = new Set<string>();
const holdOne = defineAction({
  name: 'review10-held-one',
  run: async (input: { mark: string }) => {
    entered.add(input.mark);
    await held.get(input.mark)!.promise;
    return 'one';
  },
});
const two = defineAction({ name: 'review10-two', run: async () => 'two' });
const twoSteps = defineFlow({
  name: 'review10-fused-then-stopped',
  version: 1,
  run: async (ctx, input: { mark: string }) => {
    await ctx.action(holdOne, input);
    return ctx.action(two, null);
  },
});

describe(`a fused start whose run is ended while its first step runs (${testDbKind()})`, () => {
  const pool = useEngineWithPool();
  const withPool = () => pool.start({ flows: [twoSteps], actions: [holdOne, two] });

  /** Starts the flow handed to the pool and waits until step 1's action, claimed by the start, is running. */
  const startHeld = async ({ engine }: TestEngine, mark: string, opts: { runTimeoutSeconds?: number } = {}) => {
    const db = pool.db();
    held.set(mark, gate());
    const { runId } = await engine.startFlow(twoSteps, { mark }, opts);
    const fused = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 1 } });
    // Written by the start, claimed at attempt 1: the case under test, not a claim of the replay's.
    expect([fused.status, fused.attempts, fused.started_at?.getTime()]).toEqual([
      'Running',
      1,
      (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).created_at.getTime(),
    ]);
    await waitFor(`step 1 of ${mark} to run`, async () => (entered.has(mark) ? true : undefined));
    return runId;
  };
  const history = async (runId: string) =>
    (await pool.db().prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } })).map((e) =>
      e.sequence === null ? e.type : `${e.type}#${e.sequence}`,
    );

  it('a terminate: step 1 finishes into the fence, no outcome nor event after run.terminated, step 2 never claimed', async () => {
    const t = await withPool();
    const { engine } = t;
    const db = pool.db();
    const runId = await startHeld(t, 'terminate');
    const fate = new Promise<string>((resolve) => {
      engine.events.on('action.outcome_rejected', (e) => (e.runId === runId ? resolve('rejected') : undefined));
      engine.events.on('action.completed', (e) => (e.runId === runId ? resolve('completed') : undefined));
    });
    expect(await engine.terminate(runId, { reason: 'review10' })).toEqual({ terminated: true });
    held.get('terminate')!.open();
    // The step's outcome meets the run's terminal state: refused by the fence, not recorded.
    expect(await fate).toBe('rejected');
    const events = await history(runId);
    expect(events.slice(events.indexOf('run.terminated'))).toEqual(['run.terminated']);
    expect(events.filter((e) => e.startsWith('action.'))).toEqual(['action.started#1']);
    const steps = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    expect(steps.map((s) => [s.sequence, s.output])).toEqual([[1, null]]);
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect([run.status, run.output]).toEqual(['Terminated', null]);
  });

  it('the run timeout: the backstop ends the run while step 1 runs, and its outcome meets the fence', async () => {
    const t = await withPool();
    const { engine } = t;
    const db = pool.db();
    const runId = await startHeld(t, 'timeout', { runTimeoutSeconds: 60 });
    const fate = new Promise<string>((resolve) => {
      engine.events.on('action.outcome_rejected', (e) => (e.runId === runId ? resolve('rejected') : undefined));
      engine.events.on('action.completed', (e) => (e.runId === runId ? resolve('completed') : undefined));
    });
    // The start wrote the backstop's wake with the run (ADR 0011); past it, the pool closes the run.
    t.clock.advance(61_000);
    await announceJob(db);
    await waitFor(`run ${runId} to time out`, async () => {
      const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      return r.status === 'TimedOut' ? r : undefined;
    });
    held.get('timeout')!.open();
    expect(await fate).toBe('rejected');
    const events = await history(runId);
    expect(events).toEqual(['run.started', 'run.running', 'action.started#1', 'run.timedout']);
  });

  it('a cancel whose replay parked on step 1: step 1 completes once, the cancel is delivered at step 2, and the run ends cancelled', async () => {
    const t = await withPool();
    const { engine } = t;
    const db = pool.db();
    const runId = await startHeld(t, 'cancel');
    expect(await engine.cancel(runId, { reason: 'review10' })).toEqual({ requested: true });
    // The cancellation's wake replays the run while step 1 runs here, and parks on it as running.
    await waitFor('the replay the cancel woke to park on step 1', async () => {
      const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      return r.waiting_for?.startsWith('step 1 (review10-held-one) is running on another worker') ? true : undefined;
    });
    held.get('cancel')!.open();
    const run = await finished(db, runId);
    expect(run.status).toBe('Cancelled');
    // The replay the start handed step 1 to had read no cancel; step 2's claim met it (ADR 0006: delivered once).
    expect(await history(runId)).toEqual([
      'run.started',
      'run.running',
      'action.started#1',
      'run.cancel_requested',
      'action.completed#1',
      'run.cancel_delivered#2',
      'run.cancelled',
    ]);
    const actions = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    expect(actions.map((s) => [s.sequence, s.kind, s.status, s.attempts])).toEqual([
      [1, 'action', 'Completed', 1],
      [2, 'cancel', 'Completed', 0],
    ]);
  });
});
