import { describe, expect, it } from 'vitest';
import type { RawDb } from '../../../src/db/raw-db.ts';
import { defineAction, defineFlow, type ActionDefinition } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { writePendingOutcome } from '../../../src/runtime/steps/pending-outcome.ts';
import { forgetStepsFrom } from '../../../src/store/repairs/forget-steps-from.ts';
import { requestCancel } from '../../../src/store/request-cancel.ts';
import type { Db } from '../../../src/store/types.ts';
import { bareEngine } from '../harness.ts';
import { useRunLockHolder } from '../../support/run-lock-holder.ts';

/**
 * Review 8 of ADR 0042: a fused step transition (step 1's outcome, step 2 inserted already claimed)
 * or a fused finish reads its snapshot before it waits on the run's row lock. What a repair or a
 * cancellation commits during that wait must be honoured exactly as by the transaction the statement
 * replaces. Each test
 * holds the run's row FOR UPDATE on a connection of its own (as a repair or a terminate takes it),
 * waits until the fused statement is seen waiting for a lock in pg_stat_activity (progress, not
 * time), makes its change in that transaction and commits; then a fresh replay settles the run.
 */
describe('a run changed while its fused step transition or finish waits on the row lock (PostgreSQL)', () => {
  const holder = useRunLockHolder();
  const { holdTheRun, history } = holder;
  /** Once the fused statement (`marker`: the transition's or the finish's CTE) waits for a lock: `write` in the held transaction, then its commit. */
  const commitOnceWaiting = (write: (tx: RawDb) => Promise<void>, marker = 'sagaflow: step transitions') =>
    holder.commitOnceWaiting(marker, write);
  const steps = async (runId: string) =>
    (await holder.db().prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } })).map(
      (s) => [s.sequence, s.status, s.attempts],
    );

  /** A two-step flow whose first action holds the run (once) before it returns. */
  function twoSteps(name: string) {
    const ran: string[] = [];
    const held = { runId: '', done: false };
    const first: ActionDefinition<null, string> = defineAction({
      name: `${name}-first`,
      run: async () => {
        ran.push('first');
        if (!held.done) {
          held.done = true;
          await holdTheRun(held.runId);
        }
        return 'first';
      },
    });
    const second = defineAction({
      name: `${name}-second`,
      run: async () => {
        ran.push('second');
        return 'second';
      },
    });
    const flow = defineFlow({
      name,
      version: 1,
      run: async (ctx) => [await ctx.action(first, null), await ctx.action(second, null)],
    });
    const e = bareEngine(holder.db(), { flows: [flow], actions: [first, second] });
    return { e, flow, ran, held };
  }

  it('a cancellation requested meanwhile: step 2 is never claimed nor run, step 1 is recorded once, the run ends Cancelled', async () => {
    const { e, flow, ran, held } = twoSteps('review8-cancel-while-fused');
    const { runId } = await e.startFlow(flow, null);
    held.runId = runId;
    const replay = executeRun(e.runtime, runId);
    await commitOnceWaiting(async (tx) => {
      const now = new Date();
      expect(
        await requestCancel(tx as unknown as Db, {
          runId,
          reason: 'review8',
          deadline: new Date(now.getTime() + 60_000),
          now,
        }),
      ).toBe(true);
    });
    expect(await replay).not.toBe('finished');
    expect(ran).toEqual(['first']);
    expect((await steps(runId)).filter(([sequence]) => sequence === 2)).toEqual([]);

    // A fresh replay sees the cancellation: the run ends without step 2's action ever running.
    await executeRun(e.runtime, runId);
    expect(ran).toEqual(['first']);
    const run = await holder.db().prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(run.status).toBe('Cancelled');
    const events = await history(runId);
    expect(events.filter((t) => t === 'action.completed#1')).toHaveLength(1);
    expect(events.filter((t) => t.startsWith('action.started#2'))).toEqual([]);
    expect(events.at(-1)).toBe('run.cancelled');
  });

  it("an operator's complete_step on step 1 meanwhile: the worker's outcome is rejected once, step 2 runs once", async () => {
    const { e, flow, ran, held } = twoSteps('review8-completed-while-fused');
    const { runId } = await e.startFlow(flow, null);
    held.runId = runId;
    const replay = executeRun(e.runtime, runId);
    await commitOnceWaiting(async (tx) => {
      const step = await holder.db().prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 1 } });
      // The repair's own write for a Running step (completeStepRepair.perform): fenced on its attempts.
      const written = await writePendingOutcome(
        tx,
        {
          table: 'action_runs',
          runId,
          rowId: step.id,
          sequence: 1,
          name: step.name,
          attempts: step.attempts,
          output: 'operator',
        },
        new Date(),
      );
      expect(written).toBe('recorded');
    });
    expect(await replay).not.toBe('finished');
    expect((await steps(runId)).filter(([sequence]) => sequence === 2)).toEqual([]);

    expect(await executeRun(e.runtime, runId)).toBe('finished');
    expect(ran).toEqual(['first', 'second']);
    const run = await holder.db().prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect([run.status, run.output]).toEqual(['Completed', ['operator', 'second']]);
    expect(await steps(runId)).toEqual([
      [1, 'Completed', 1],
      [2, 'Completed', 1],
    ]);
    const events = await history(runId);
    expect(events.filter((t) => t === 'action.completed#1')).toHaveLength(1);
    expect(events.filter((t) => t === 'action.started#2')).toHaveLength(1);
    const anomalies = await holder.db().prisma.anomalyLog.findMany({ where: { run_id: runId } });
    expect(anomalies.map((a) => [a.code, a.sequence])).toEqual([['outcome_rejected', 1]]);
  });

  it('resume_from_step 1 meanwhile: the forgotten step is not written back, step 2 is not claimed by the stale replay', async () => {
    const { e, flow, ran, held } = twoSteps('review8-forgotten-while-fused');
    const { runId } = await e.startFlow(flow, null);
    held.runId = runId;
    const replay = executeRun(e.runtime, runId);
    await commitOnceWaiting(async (tx) => {
      expect(await forgetStepsFrom(tx as unknown as Db, runId, 1)).toHaveLength(1);
    });
    expect(await replay).not.toBe('finished');
    expect(await steps(runId)).toEqual([]);

    // The next replay schedules step 1 again (what the repair asked for), then step 2, once each.
    expect(await executeRun(e.runtime, runId)).toBe('finished');
    expect(ran).toEqual(['first', 'first', 'second']);
    expect(await steps(runId)).toEqual([
      [1, 'Completed', 1],
      [2, 'Completed', 1],
    ]);
    const events = await history(runId);
    expect(events.filter((t) => t === 'action.started#2')).toHaveLength(1);
    expect(events.filter((t) => t === 'action.completed#2')).toHaveLength(1);
  });

  it("an operator's complete_step on the last step while the fused finish waits: the worker's outcome is rejected, the run ends with the operator's", async () => {
    const ran: string[] = [];
    let runId = '';
    const only = defineAction({
      name: 'review8-completed-at-finish-only',
      run: async () => {
        ran.push('only');
        if (ran.length === 1) await holdTheRun(runId);
        return 'worker';
      },
    });
    const flow = defineFlow({
      name: 'review8-completed-at-finish',
      version: 1,
      run: async (ctx) => ctx.action(only, null),
    });
    const e = bareEngine(holder.db(), { flows: [flow], actions: [only] });
    ({ runId } = await e.startFlow(flow, null));
    const replay = executeRun(e.runtime, runId);
    await commitOnceWaiting(async (tx) => {
      const step = await holder.db().prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 1 } });
      const outcome = { table: 'action_runs' as const, runId, rowId: step.id, sequence: 1, name: step.name };
      expect(
        await writePendingOutcome(tx, { ...outcome, attempts: step.attempts, output: 'operator' }, new Date()),
      ).toBe('recorded');
    }, 'sagaflow: top-level run finishes');
    expect(await replay).not.toBe('finished');
    expect((await holder.db().prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).status).not.toBe('Completed');

    expect(await executeRun(e.runtime, runId)).toBe('finished');
    expect(ran).toEqual(['only']);
    const run = await holder.db().prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect([run.status, run.output]).toEqual(['Completed', 'operator']);
    const events = await history(runId);
    expect(events.filter((t) => t === 'action.completed#1')).toHaveLength(1);
    expect(events.filter((t) => t === 'run.completed')).toHaveLength(1);
    const anomalies = await holder.db().prisma.anomalyLog.findMany({ where: { run_id: runId } });
    expect(anomalies.map((a) => [a.code, a.sequence])).toEqual([['outcome_rejected', 1]]);
  });
});
