import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { defineAction, defineFlow, NonRetryableError } from '../../src/index.ts';
import { executeRun } from '../../src/runtime/execute-run.ts';
import type { ClaimedStep } from '../../src/runtime/runtime-deps.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';
import { bareEngine, gate, within } from './harness.ts';

/**
 * Seed 000, "When a duplicate closes a batch early", for rollback levels. Two replays of one run (a
 * duplicate delivery) run the same parallel rollback level: each claims one compensation and loses
 * the other's claim. compensate-step.ts has no "last finisher carries on" re-read (parallel-step.ts
 * has one for actions): each replay returns 'pending' for the row the other holds and parks. When
 * both compensations have completed, the run is Waiting, says a step "is running on another worker",
 * and has no job left to wake it.
 */
const undoGate = gate();
const book = (name: string) => defineAction({ name, run: async () => ({ id: name }) });
const undo = (name: string) =>
  defineAction({
    name,
    run: async () => {
      await undoGate.promise;
      return { undone: name };
    },
  });
const book1 = book('book-1');
const book2 = book('book-2');
const undo1 = undo('undo-1');
const undo2 = undo('undo-2');
const fail = defineAction({
  name: 'fail',
  run: async () => {
    throw new NonRetryableError('no car');
  },
});
const flow = defineFlow({
  name: 'parallel-rollback',
  version: 1,
  run: async (ctx) => {
    try {
      await ctx.action(book1, null).compensateWith(undo1, () => null);
      await ctx.action(book2, null).compensateWith(undo2, () => null);
      await ctx.action(fail, null);
      return null;
    } catch (err) {
      await ctx.compensate({ parallel: true });
      throw err;
    }
  },
});
const actions = [book1, book2, undo1, undo2, fail];

describe(`regression (review): a parallel rollback level split by a duplicate delivery (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    undoGate.open();
    await db.close();
  });

  it('the replay that finishes last carries the run on (no park with nobody to wake it)', async () => {
    const runningRow = (name: string) => async () =>
      (await db.prisma.compensationRun.findFirst({ where: { name, status: 'Running' } })) ? true : undefined;
    // Replay A waits for B to own undo-2; replay B waits for A to own undo-1.
    const a = bareEngine(db, {
      flows: [flow],
      actions,
      faults: {
        beforeClaim: async (s: ClaimedStep) => {
          if (s.name === 'undo-2') await waitFor('B to claim undo-2', runningRow('undo-2'));
        },
      },
    });
    const b = bareEngine(db, {
      flows: [flow],
      actions,
      faults: {
        beforeClaim: async (s: ClaimedStep) => {
          if (s.name === 'undo-1') await waitFor('A to claim undo-1', runningRow('undo-1'));
        },
      },
    });
    const { runId } = await a.startFlow(flow, null);
    await db.prisma.job.deleteMany({ where: { run_id: runId } }); // the start job, consumed by these replays

    const pA = executeRun(a.runtime, runId);
    await waitFor('A to claim undo-1', runningRow('undo-1'));
    const pB = executeRun(b.runtime, runId); // the duplicate delivery
    await waitFor('both replays to lose one claim', async () =>
      (await db.prisma.anomalyLog.count({ where: { run_id: runId, code: 'claim_lost' } })) >= 2 ? true : undefined,
    );
    undoGate.open();
    const outcomes = await within(Promise.all([pA, pB]), 10_000);

    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const comps = await db.prisma.compensationRun.findMany({ where: { run_id: runId } });
    expect(comps.every((c) => c.status === 'Completed')).toBe(true);
    // Both replays may see the level settled on re-read; the finish is a compare-and-swap, so the
    // run is settled once whoever gets there.
    expect(outcomes === 'timeout' ? outcomes : outcomes.includes('finished')).toBe(true);
    expect({ status: run.status, waitingFor: run.waiting_for }).toEqual({ status: 'Compensated', waitingFor: null });
    expect(await db.prisma.flowEvent.count({ where: { run_id: runId, type: 'run.compensated' } })).toBe(1);

    // The replay that lost the finish may have queued a wake for its outcome before the other's
    // finish landed (ADR 0087). The finish acknowledges only its own job, so such a wake can stay;
    // whoever takes it finds the run ended and writes nothing.
    const events = await db.prisma.flowEvent.count({ where: { run_id: runId } });
    const wakes = await db.prisma.job.count({ where: { run_id: runId } });
    expect(wakes).toBeLessThanOrEqual(1);
    if (wakes > 0) await executeRun(a.runtime, runId); // what a worker taking the wake runs
    const after = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect({ status: after.status, version: after.version, events }).toEqual({
      status: 'Compensated',
      version: run.version,
      events: await db.prisma.flowEvent.count({ where: { run_id: runId } }),
    });
  });
});
