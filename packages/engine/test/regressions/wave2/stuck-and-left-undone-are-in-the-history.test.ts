import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow, type ActionDefinition, type Json, type RunDetail } from '../../../src/index.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

/**
 * Issue 13 item 11: a replay-blocked run that then hit its run timeout ended TimedOut with its stuck
 * reason cleared, nothing in its history saying it had been stuck, and nothing saying what it left
 * undone (a reservation never released). Now becoming stuck and no longer being stuck are history
 * events, once per transition, and a timed-out run states what it left undone.
 */

const released: string[] = [];
const reserve = defineAction({ name: 'reserve-seat', run: async (i: { order: string }) => ({ seat: `s-${i.order}` }) });
const release = defineAction({
  name: 'release-seat',
  run: async (i: { seat: string }) => {
    released.push(i.seat);
    return null;
  },
});
const charge = defineAction({ name: 'charge-card', run: async () => ({ ok: true }) });
const chargeRenamed = defineAction({ name: 'charge-card-v2', run: async () => ({ ok: true }) });

const booking = defineFlow({
  name: 'book-seat',
  version: 1,
  run: async (ctx, order: string) => {
    await ctx
      .action(reserve, { order })
      .compensateWith(release, (out) => ({ seat: out.seat }))
      .run();
    await ctx.awaitSignal('pay', { timeoutSeconds: 3600 });
    await ctx.action(charge, {}).run();
    return null;
  },
});
/** A deploy that changed the step recorded as the signal wait: replaying the old record is blocked. */
const bookingChanged = defineFlow({
  name: 'book-seat',
  version: 2,
  run: async (ctx, order: string) => {
    await ctx
      .action(reserve, { order })
      .compensateWith(release, (out) => ({ seat: out.seat }))
      .run();
    await ctx.action(chargeRenamed, {}).run();
    return null;
  },
});
const actions = [reserve, release, charge, chargeRenamed] as ActionDefinition<never, Json>[];

const stuckEvents = (d: RunDetail) =>
  d.events.filter((e) => e.type === 'run.stuck' || e.type === 'run.unstuck').map((e) => [e.type, e.data]);

describe(`stuck episodes and what a timed-out run left undone are in its history (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  let deployed: TestEngine;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [booking], actions });
    deployed = await createTestEngine({ db: t.db, clock: t.clock, flows: [bookingChanged], actions });
  });
  afterAll(async () => {
    await deployed.close();
    await t.closeAll();
  });

  /** Wakes the run on `e` and waits until that replay has parked it again (its version moved twice). */
  const replayAgain = async (e: TestEngine, runId: string) => {
    const before = (await t.db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).version;
    await e.faults.duplicateDelivery(runId);
    e.engine.startWorkers();
    await waitFor('the replay to park the run again', async () => {
      const r = await t.db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      return r.version >= before + 2 && r.status === 'Waiting' ? r : undefined;
    });
    await e.engine.stopWorkers();
  };

  const blockRun = async (order: string, runTimeoutSeconds?: number) => {
    const { runId } = await t.engine.startFlow(booking, order, runTimeoutSeconds ? { runTimeoutSeconds } : {});
    await t.drive(runId, { skipTime: false, until: (d) => d.run.waitingFor?.startsWith('signal "pay"') ?? false });
    await t.engine.stopWorkers();
    await replayAgain(deployed, runId);
    return runId;
  };

  it('replay-blocked then timed out: run.stuck with the reason, and the terminal event and run view list what was left undone', async () => {
    const runId = await blockRun('o-1', 60);
    const blocked = await t.engine.getRun(runId);
    expect(blocked?.run.stuckReason).toMatch(/^replay_blocked: /);
    // The same reason set again by another blocked replay is not a new episode.
    await replayAgain(deployed, runId);

    t.clock.advance(61_000);
    await deployed.faults.duplicateDelivery(runId);
    const done = await deployed.drive(runId, { skipTime: false });
    await deployed.engine.stopWorkers();
    expect(done.run.status).toBe('TimedOut');
    expect(released).not.toContain('s-o-1');

    const reason = blocked?.run.stuckReason ?? '';
    expect(stuckEvents(done)).toEqual([
      ['run.stuck', { reason }],
      ['run.unstuck', { reason, by: 'run.timedout' }],
    ]);
    const terminal = done.events.at(-1);
    expect(terminal?.type).toBe('run.timedout');
    const leftUndone = {
      source: 'record',
      steps: [{ sequence: 1, name: 'reserve-seat', compensation: null }],
      plan_error: reason,
    };
    expect(terminal?.data).toMatchObject({ left_undone: leftUndone });
    expect(done.run.leftUndone).toEqual(leftUndone);
  });

  it('a run that times out while its code can be replayed names the compensations it never ran', async () => {
    const { runId } = await t.engine.startFlow(booking, 'o-2', { runTimeoutSeconds: 60 });
    await t.drive(runId, { skipTime: false, until: (d) => d.run.waitingFor?.startsWith('signal "pay"') ?? false });
    t.clock.advance(61_000);
    const done = await t.drive(runId, { skipTime: false });
    expect(done.run.status).toBe('TimedOut');
    const leftUndone = { source: 'plan', steps: [{ sequence: 1, name: 'reserve-seat', compensation: 'release-seat' }] };
    expect(done.events.at(-1)?.data).toMatchObject({ left_undone: leftUndone });
    expect(done.run.leftUndone).toEqual(leftUndone);
    expect(stuckEvents(done)).toEqual([]);
  });

  it('stuck and unstuck appear exactly once per transition: blocked twice, repaired, replayed again', async () => {
    const runId = await blockRun('o-3');
    await replayAgain(deployed, runId);
    // The original code takes the run back: it parks healthy, waiting for its signal.
    await replayAgain(t, runId);
    const repaired = await t.engine.getRun(runId);
    expect(repaired?.run.stuckReason).toBeNull();
    await replayAgain(t, runId);
    // Blocked once more by the changed code: a new episode.
    await replayAgain(deployed, runId);
    const detail = await t.engine.getRun(runId);
    const reason = detail?.run.stuckReason ?? '';
    expect(reason).toMatch(/^replay_blocked: /);
    expect(stuckEvents(detail as RunDetail)).toEqual([
      ['run.stuck', { reason }],
      ['run.unstuck', { reason, by: 'park' }],
      ['run.stuck', { reason }],
    ]);
    await t.engine.signal(runId, 'pay');
    t.engine.startWorkers();
    const done = await t.drive(runId, { skipTime: false });
    expect(done.run.status).toBe('Completed');
    expect(stuckEvents(done).map(([type]) => type)).toEqual(['run.stuck', 'run.unstuck', 'run.stuck', 'run.unstuck']);
  });
});
