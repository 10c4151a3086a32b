import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';
import { leftUndoneOf } from './support/left-undone.ts';

/**
 * Review 22. ADR 0091 adds `in_flight` to a TimedOut run's `left_undone` too. Unlike a terminate, the
 * timeout's list (findLeftUndone) is not read under the run's lock nor in its settling transaction: the
 * rollback plan replays the flow's code over the steps it read first (planRollback), and the steps in
 * flight are read again afterwards, outside any transaction. A step whose outcome commits between the
 * two reads is in neither list: the plan saw it Running (no compensation registered yet), the second
 * read saw it Completed (not in flight). The run then ends TimedOut with a completed step whose
 * compensation never ran, and its `left_undone` names nothing.
 *
 * Driven by progress: the flow's code, armed by the test, waits on a gate in the plan's replay; the
 * step's action waits on another gate in the live replay.
 */
describe(`a TimedOut run against a step that completes while its left-undone list is read (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('a TimedOut run with a step Running lists it in flight (no race)', async () => {
    const started = gate();
    const release = gate();
    const charge = defineAction({
      name: 'review22-to-charge-0',
      run: async () => {
        started.open();
        await release.promise;
        return 'charged';
      },
    });
    const refund = defineAction({ name: 'review22-to-refund-0', run: async () => null });
    const reserve = defineAction({ name: 'review22-to-reserve-0', run: async () => 'r' });
    const flow = defineFlow({
      name: 'review22-to-flow-0',
      version: 1,
      run: async (ctx) => {
        await ctx
          .action(reserve, null)
          .compensateWith(refund, () => null)
          .run();
        await ctx
          .action(charge, null)
          .compensateWith(refund, () => null)
          .run();
        return ctx.awaitSignal('never', { timeoutSeconds: 36000 });
      },
    });
    const clock = new TestClock();
    const e = bareEngine(db, { flows: [flow], actions: [charge, refund, reserve], clock });
    const { runId } = await e.startFlow(flow, null, { runTimeoutSeconds: 60 });
    const live = executeRun(e.runtime, runId);
    await started.promise;
    clock.advance(120_000);
    expect(await executeRun(e.runtime, runId)).toBe('finished');
    release.open();
    await live;
    const l = await leftUndoneOf(db, runId);
    expect(l.status).toBe('TimedOut');
    expect(l.stated).toEqual({
      source: 'plan',
      steps: [{ sequence: 1, name: reserve.name, compensation: refund.name }],
      in_flight: [{ kind: 'action', sequence: 2, name: charge.name }],
    });
    expect(l.onEvent).toEqual(l.stated);
    expect(l.rows).toEqual([
      [1, 'action', reserve.name, 'Completed'],
      [2, 'action', charge.name, 'Running'],
    ]);
  });

  it('a step that completes during the plan is listed, left undone or in flight', async () => {
    const started = gate();
    const release = gate();
    const planReached = gate();
    const planRelease = gate();
    let armed = false;
    const charge = defineAction({
      name: 'review22-to-charge-1',
      run: async () => {
        started.open();
        await release.promise;
        return 'charged';
      },
    });
    const refund = defineAction({ name: 'review22-to-refund-1', run: async () => null });
    const flow = defineFlow({
      name: 'review22-to-flow-1',
      version: 1,
      run: async (ctx) => {
        // Only the timing-out replay's plan waits here (armed after the live replay passed it).
        if (armed) {
          planReached.open();
          await planRelease.promise;
        }
        await ctx
          .action(charge, null)
          .compensateWith(refund, () => null)
          .run();
        return ctx.awaitSignal('never', { timeoutSeconds: 36000 });
      },
    });
    const clock = new TestClock();
    const e = bareEngine(db, { flows: [flow], actions: [charge, refund], clock });
    const { runId } = await e.startFlow(flow, null, { runTimeoutSeconds: 60 });
    const live = executeRun(e.runtime, runId);
    await started.promise; // step 1 is Running on the live replay's worker
    clock.advance(120_000); // the run's timeout has passed
    armed = true;
    const timingOut = executeRun(e.runtime, runId);
    await planReached.promise; // the plan has read the steps (step 1 Running) and replays the code
    release.open(); // the charge returns: its outcome commits (the run is still open)
    await waitFor('step 1 to be recorded Completed', async () => {
      const row = await db.prisma.actionRun.findFirst({ where: { run_id: runId, sequence: 1 } });
      return row?.status === 'Completed' ? row : undefined;
    });
    planRelease.open();
    expect(await timingOut).toBe('finished');
    await live;

    const l = await leftUndoneOf(db, runId);
    expect(l.status).toBe('TimedOut');
    expect(l.rows[0]).toEqual([1, 'action', charge.name, 'Completed']);
    expect(l.compensations).toEqual([]); // the charge was never refunded
    expect(l.onEvent).toEqual(l.stated);
    // What the run states must cover the charge: either left undone (it completed) or in flight.
    const named = [
      ...(l.stated?.steps ?? []).map((s) => s.sequence),
      ...(l.stated?.in_flight ?? []).map((f) => f.sequence),
    ];
    expect(named, `left_undone: ${JSON.stringify(l.stated)}`).toEqual([1]);
  });
});
