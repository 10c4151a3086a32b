import { describe, expect, it } from 'vitest';
import type { RawDb } from '../src/db/raw-db.ts';
import { defineAction, defineFlow } from '../src/index.ts';
import { executeRun } from '../src/runtime/execute-run.ts';
import { appendRunEnd } from '../src/store/append-run-end.ts';
import { finishRun } from '../src/store/finish-run.ts';
import { markRunStuck } from '../src/store/mark-run-stuck.ts';
import type { Db } from '../src/store/types.ts';
import { bareEngine } from './regressions/harness.ts';
import { useRunLockHolder } from './support/run-lock-holder.ts';

/**
 * ADR 0042 and ADR 0011 on a real PostgreSQL: a terminate that commits while a fused step transition
 * (or a fused finish) waits on the run's row lock wins; nothing of the run commits after its terminal
 * event. The terminate is the engine's own terminal transition (lockOpenRun FOR UPDATE, finishRun,
 * appendRunEnd) on a connection of the test's, held open until the fused statement is seen waiting
 * for the lock (progress, not time), then committed. A stuck mark committed the same way while the
 * fused finish waits closes its gate (the run row moved), and the transaction ends the episode.
 */
describe('a run changed while a fused statement waits on its lock (PostgreSQL)', () => {
  const holder = useRunLockHolder();
  const { holdTheRun, commitOnceWaiting, history } = holder;
  /** The engine's terminal transition of a terminate. */
  const terminate = (runId: string) => async (tx: RawDb) => {
    expect(await finishRun(tx, { id: runId, status: 'Terminated', now: new Date() })).not.toBeNull();
    await appendRunEnd(tx, { runId, type: 'run.terminated', data: {} });
  };

  it('between two steps: the next step is never claimed, the outcome is refused, nothing follows run.terminated', async () => {
    const ran: string[] = [];
    let runId = '';
    const first = defineAction({
      name: 'terminated-first',
      run: async () => {
        ran.push('first');
        await holdTheRun(runId);
        return 'first';
      },
    });
    const second = defineAction({
      name: 'terminated-second',
      run: async () => {
        ran.push('second');
        return null;
      },
    });
    const flow = defineFlow({
      name: 'fused-terminated-between-steps',
      version: 1,
      run: async (ctx) => [await ctx.action(first, null), await ctx.action(second, null)],
    });
    const e = bareEngine(holder.db(), { flows: [flow], actions: [first, second] });
    ({ runId } = await e.startFlow(flow, null));
    const replay = executeRun(e.runtime, runId);
    await commitOnceWaiting('sagaflow: step transitions', terminate(runId));
    expect(await replay).not.toBe('finished');

    expect(ran).toEqual(['first']);
    const run = await holder.db().prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(run.status).toBe('Terminated');
    expect(await history(runId)).toEqual(['run.started', 'run.running', 'action.started#1', 'run.terminated']);
    const steps = await holder
      .db()
      .prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    expect(steps.map((s) => [s.sequence, s.status, s.attempts])).toEqual([[1, 'Running', 1]]);
    const anomalies = await holder.db().prisma.anomalyLog.findMany({ where: { run_id: runId } });
    expect(anomalies.map((a) => [a.code, a.sequence])).toEqual([['write_refused', 1]]);
  });

  it('at the finish: the last outcome is refused and the run stays Terminated, with nothing after run.terminated', async () => {
    let runId = '';
    const only = defineAction({
      name: 'terminated-only',
      run: async () => {
        await holdTheRun(runId);
        return 'only';
      },
    });
    const flow = defineFlow({
      name: 'fused-terminated-at-finish',
      version: 1,
      run: async (ctx) => ctx.action(only, null),
    });
    const e = bareEngine(holder.db(), { flows: [flow], actions: [only] });
    ({ runId } = await e.startFlow(flow, null));
    const replay = executeRun(e.runtime, runId);
    await commitOnceWaiting('sagaflow: top-level run finishes', terminate(runId));
    expect(await replay).not.toBe('finished');

    const run = await holder.db().prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect([run.status, run.output]).toEqual(['Terminated', null]);
    expect(await history(runId)).toEqual(['run.started', 'run.running', 'action.started#1', 'run.terminated']);
    const anomalies = await holder.db().prisma.anomalyLog.findMany({ where: { run_id: runId } });
    expect(anomalies.map((a) => [a.code, a.sequence])).toEqual([['write_refused', 1]]);
  });

  it('a stuck mark committed while the fused finish waits: the statement writes nothing, the transaction closes the episode', async () => {
    let runId = '';
    const only = defineAction({
      name: 'stuck-meanwhile-only',
      run: async () => {
        await holdTheRun(runId);
        return 'only';
      },
    });
    const flow = defineFlow({
      name: 'fused-stuck-at-finish',
      version: 1,
      run: async (ctx) => ctx.action(only, null),
    });
    const e = bareEngine(holder.db(), { flows: [flow], actions: [only] });
    ({ runId } = await e.startFlow(flow, null));
    const replay = executeRun(e.runtime, runId);
    // The monitor's stuck mark (a run row update with its run.stuck) lands while the finish waits:
    // the finish's snapshot, taken before the wait, cannot see that event; the gate must notice.
    await commitOnceWaiting('sagaflow: top-level run finishes', async (tx) => {
      expect(await markRunStuck(tx as unknown as Db, { runId, stuckReason: 'owner_gone: test', now: new Date() })).toBe(
        true,
      );
    });
    expect(await replay).toBe('finished');

    const run = await holder.db().prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect([run.status, run.output, run.stuck_reason]).toEqual(['Completed', 'only', null]);
    expect(await history(runId)).toEqual([
      'run.started',
      'run.running',
      'action.started#1',
      'run.stuck',
      'action.completed#1',
      'run.unstuck',
      'run.completed',
    ]);
  });
});
