import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow, type Engine } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { holdRuns, waitForWaiters } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { bareEngine, gate } from '../harness.ts';
import { lockWaiters } from '../review21/lock-waiters.ts';
import { leftUndoneOf } from './support/left-undone.ts';

/**
 * Review 22. ADR 0091: a terminate reads the run's steps and compensations under the tree's locks, so
 * its `left_undone` is the state at its commit. Attacked here: a step's (or a compensation's) outcome
 * that commits concurrently with the terminate, in each order. Every interleaving is driven by
 * progress: a connection of the test's own holds the run's row until pg_stat_activity shows the
 * outcome's statement and the terminate queued behind it, in the order the test wants.
 */
describe('terminate against a step or a compensation that completes at the same moment (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  let n = 0;
  /** A run whose step 1 is held in its action by a gate; after it, the run waits for a signal. */
  async function runInStep1() {
    n += 1;
    const started = gate();
    const release = gate();
    const slow = defineAction({
      name: `review22-c-slow-${n}`,
      run: async () => {
        started.open();
        await release.promise;
        return 'done';
      },
    });
    const flow = defineFlow({
      name: `review22-c-flow-${n}`,
      version: 1,
      run: async (ctx) => {
        await ctx.action(slow, null).run();
        return ctx.awaitSignal('never', { timeoutSeconds: 3600 });
      },
    });
    const e = bareEngine(db, { flows: [flow], actions: [slow] });
    const { runId } = await e.startFlow(flow, null);
    const live = executeRun(e.runtime, runId);
    await started.promise;
    return { e, runId, release, live, name: slow.name };
  }

  /**
   * A run that completed steps 1 and 2 (each with a compensation), failed at step 3, and is rolling
   * back, newest first: with `held` 'a', undo of step 2 is done and undo of step 1 is held in its action
   * by a gate; with 'b', undo of step 2 is held.
   */
  async function runInUndo(held: 'a' | 'b') {
    n += 1;
    const started = gate();
    const release = gate();
    const a = defineAction({ name: `review22-c-a-${n}`, run: async () => 'a' });
    const b = defineAction({ name: `review22-c-b-${n}`, run: async () => 'b' });
    const boom = defineAction({
      name: `review22-c-boom-${n}`,
      run: async () => {
        throw new Error('no');
      },
    });
    const holding = async () => {
      started.open();
      await release.promise;
      return null;
    };
    // With 'b' held, undo of step 1 waits for `after`: once undo of step 2 committed, a row lock freed is
    // not handed to the waiters in turn, and on a loaded machine the worker could claim and run undo of
    // step 1 and end the run Failed before the terminate, woken, took the run (CI: `terminated: false`).
    const after = gate();
    const undoA = defineAction({
      name: `review22-c-undo-a-${n}`,
      run: held === 'a' ? holding : async () => (await after.promise, null),
    });
    const undoB = defineAction({ name: `review22-c-undo-b-${n}`, run: held === 'b' ? holding : async () => null });
    const flow = defineFlow({
      name: `review22-c-rollback-${n}`,
      version: 1,
      run: async (ctx) => {
        try {
          await ctx
            .action(a, null)
            .compensateWith(undoA, () => null)
            .run();
          await ctx
            .action(b, null)
            .compensateWith(undoB, () => null)
            .run();
          await ctx.action(boom, null).run();
          return null;
        } catch (err) {
          await ctx.compensate();
          throw err;
        }
      },
    });
    const e = bareEngine(db, { flows: [flow], actions: [a, b, boom, undoA, undoB] });
    const { runId } = await e.startFlow(flow, null);
    const live = (async () => {
      // The first replay may park between steps: replay until the rollback holds undo of step 1.
      for (let i = 0; i < 10; i++) {
        const out = await executeRun(e.runtime, runId);
        if (out !== 'parked') return out;
        const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
        if (r.finished_at !== null) return out;
      }
      return 'parked';
    })();
    await started.promise;
    return { e, runId, release, after, live, undoA: undoA.name, undoB: undoB.name, a: a.name, b: b.name };
  }

  const terminate = (e: Engine, runId: string) => e.terminate(runId, { reason: 'review22: stop it' });

  it('the step outcome commits first: the step is listed completed, not in flight', async () => {
    if (!db.url) throw new Error('this test needs the PostgreSQL project');
    const { e, runId, release, live, name } = await runInStep1();
    const holder = await holdRuns(db.url, [runId]);
    release.open(); // the outcome's statement queues first, behind the holder
    await waitForWaiters(db, holder.pid, 1);
    const terminating = terminate(e, runId); // then the terminate's lock of the tree
    await lockWaiters(db, 2);
    await holder.commit();
    expect(await terminating).toEqual({ terminated: true });
    await live;
    const l = await leftUndoneOf(db, runId);
    expect(l.status).toBe('Terminated');
    expect(l.rows[0]).toEqual([1, 'action', name, 'Completed']);
    expect(l.stated).toEqual({ source: 'record', steps: [{ sequence: 1, name, compensation: null }] });
    expect(l.onEvent).toEqual(l.stated);
    expect(l.statedShape).toEqual(l.fromRows);
  });

  it('the terminate commits first: the step is listed in flight, and its row stays Running', async () => {
    if (!db.url) throw new Error('this test needs the PostgreSQL project');
    const { e, runId, release, live, name } = await runInStep1();
    const holder = await holdRuns(db.url, [runId]);
    const terminating = terminate(e, runId); // the terminate queues first
    await waitForWaiters(db, holder.pid, 1);
    release.open(); // then the outcome's statement
    await lockWaiters(db, 2);
    await holder.commit();
    expect(await terminating).toEqual({ terminated: true });
    await live;
    const l = await leftUndoneOf(db, runId);
    expect(l.status).toBe('Terminated');
    expect(l.rows).toEqual([[1, 'action', name, 'Running']]);
    expect(l.stated).toEqual({
      source: 'record',
      steps: [],
      in_flight: [{ kind: 'action', sequence: 1, name }],
    });
    expect(l.onEvent).toEqual(l.stated);
    expect(l.statedShape).toEqual(l.fromRows);
  });

  it('a compensation that completes first: its step is not listed as left undone, the earlier step is', async () => {
    if (!db.url) throw new Error('this test needs the PostgreSQL project');
    const r = await runInUndo('b');
    // Step 2 compensating: as the rows have it before the race.
    const before = await leftUndoneOf(db, r.runId);
    expect(before.compensations[0]).toEqual([2, r.undoB, 'Running']);
    const holder = await holdRuns(db.url, [r.runId]);
    r.release.open();
    await waitForWaiters(db, holder.pid, 1);
    const terminating = terminate(r.e, r.runId);
    await lockWaiters(db, 2);
    await holder.commit();
    expect(await terminating).toEqual({ terminated: true });
    r.after.open();
    await r.live;
    const l = await leftUndoneOf(db, r.runId);
    // The undo of step 2 committed before the terminate's lock: step 2 is not left undone, step 1 is.
    // Whether the undo of step 1 was claimed in the outcome's own statement or not, the list is the rows'.
    expect(l.status).toBe('Terminated');
    expect(l.compensations[0]).toEqual([2, r.undoB, 'Completed']);
    expect(l.stated?.steps).toEqual([{ sequence: 1, name: r.a, compensation: null }]);
    expect(l.statedShape).toEqual(l.fromRows);
    expect(l.onEvent).toEqual(l.stated);
  });

  it('the terminate commits first: the compensating step is listed left undone and its compensation in flight', async () => {
    if (!db.url) throw new Error('this test needs the PostgreSQL project');
    const r = await runInUndo('a');
    const holder = await holdRuns(db.url, [r.runId]);
    const terminating = terminate(r.e, r.runId);
    await waitForWaiters(db, holder.pid, 1);
    r.release.open();
    await lockWaiters(db, 2);
    await holder.commit();
    expect(await terminating).toEqual({ terminated: true });
    await r.live;
    const l = await leftUndoneOf(db, r.runId);
    expect(l.status).toBe('Terminated');
    expect(l.compensations).toEqual([
      [2, r.undoB, 'Completed'],
      [1, r.undoA, 'Running'],
    ]);
    expect(l.stated).toEqual({
      source: 'record',
      steps: [{ sequence: 1, name: r.a, compensation: null }],
      in_flight: [{ kind: 'compensation', sequence: 1, name: r.undoA }],
    });
    expect(l.onEvent).toEqual(l.stated);
    expect(l.statedShape).toEqual(l.fromRows);
  });

  /** The run.terminate repair, drafted against the run as it is now. */
  async function applyTerminate(e: Engine, runId: string) {
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    return e.repairs.apply({
      kind: 'run.terminate',
      target: { runId },
      expected: { runStatus: run.status as 'Running' },
      actor: 'review22@example.test',
      reason: 'review22: stop it',
      idempotencyKey: `review22-apply-${runId}`,
    });
  }

  /** The notes a terminate's left-undone list gives (run-repairs.ts leftUndoneNotes), from the run's stated list. */
  const notesOf = (l: Awaited<ReturnType<typeof leftUndoneOf>>) => [
    'no compensation runs: what the run did stays done',
    ...(l.stated?.steps ?? []).map(
      (s) => `left undone: step ${s.sequence} (${s.name}) completed and is not compensated`,
    ),
    ...(l.stated?.in_flight ?? []).map((f) =>
      f.kind === 'action'
        ? `in flight: step ${f.sequence} (${f.name}) is running on a worker; whether it took effect will not be known`
        : `in flight: compensation ${f.name} of step ${f.sequence} is running on a worker; whether it took effect will not be known`,
    ),
  ];

  for (const first of ['outcome', 'repair'] as const)
    it(`the run.terminate repair against a step outcome, the ${first} first: the applied notes are the run's list`, async () => {
      if (!db.url) throw new Error('this test needs the PostgreSQL project');
      const { e, runId, release, live, name } = await runInStep1();
      // Previewed while the step runs: it is named in flight.
      const preview = await e.repairs.preview({
        kind: 'run.terminate',
        target: { runId },
        expected: { runStatus: 'Running' },
        actor: 'review22@example.test',
        reason: 'review22: stop it',
        idempotencyKey: `review22-preview-${runId}`,
      });
      expect(preview.effects.notes).toContain(
        `in flight: step 1 (${name}) is running on a worker; whether it took effect will not be known`,
      );
      const holder = await holdRuns(db.url, [runId]);
      let applying: ReturnType<typeof applyTerminate> | undefined;
      if (first === 'outcome') release.open();
      else applying = applyTerminate(e, runId);
      await waitForWaiters(db, holder.pid, 1);
      if (first === 'outcome') applying = applyTerminate(e, runId);
      else release.open();
      await lockWaiters(db, 2);
      await holder.commit();
      const applied = await applying!;
      await live;
      const l = await leftUndoneOf(db, runId);
      expect(applied.status).toBe('applied');
      expect(l.status).toBe('Terminated');
      expect(l.rows[0]).toEqual([1, 'action', name, first === 'outcome' ? 'Completed' : 'Running']);
      expect(l.statedShape).toEqual(l.fromRows);
      expect(l.onEvent).toEqual(l.stated);
      // Apply re-planned under the lock: its notes are the state it ended, not the preview's.
      expect(applied.effects.notes).toEqual(notesOf(l));
      const [audit] = await db.prisma.repairCommand.findMany({ where: { idempotency_key: `review22-apply-${runId}` } });
      expect((audit?.result as { effects: { notes: string[] } }).effects.notes).toEqual(notesOf(l));
    });
});
