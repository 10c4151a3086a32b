import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';
import { chargeHeldPastItsTimeout } from './support/charge-held-past-its-timeout.ts';
import { leftUndoneOf } from './support/left-undone.ts';

/**
 * Review 22. ADR 0091 adds `in_flight` to a TimedOut run's `left_undone` too. As first written (ce4843a),
 * the timeout's list was not read under the run's lock nor in its settling transaction: the rollback
 * plan replayed the flow's code over the steps it read first, and the steps in flight were read again
 * afterwards, outside any transaction. A step whose outcome committed between the two reads was in
 * neither list, and the run ended TimedOut naming nothing though its charge was never refunded. Since
 * ADR 0091's amendment the rows are read under the run's lock, and the plan only names compensations.
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
    const { charge, runId, live, timingOut, release, planRelease } = await chargeHeldPastItsTimeout(
      db,
      'review22-to-1',
    );
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
