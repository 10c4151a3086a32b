import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow, isFlowError } from '../src/index.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { testDbKind } from './support/test-database.ts';

const log: string[] = [];
const hold = defineAction({
  name: 'hold-seat',
  run: async (i: { seat: string }) => (log.push(`hold ${i.seat}`), { seat: i.seat }),
});
const free = defineAction({
  name: 'free-seat',
  run: async (i: { seat: string }) => (log.push(`free ${i.seat}`), { ok: true }),
});
const charge = defineAction({ name: 'charge', run: async () => (log.push('charge'), { ok: true }) });

const booking = defineFlow({
  name: 'seat-booking',
  version: 1,
  run: async (ctx, seat: string) => {
    try {
      await ctx.action(hold, { seat }).compensateWith(free, (o) => ({ seat: o.seat }));
      await ctx.awaitSignal('paid', { timeoutSeconds: 3600 });
      await ctx.action(charge, null);
      return { booked: seat };
    } catch (err) {
      if (isFlowError(err, 'cancelled')) await ctx.compensate();
      throw err;
    }
  },
});

const childFlow = defineFlow({
  name: 'child-waits',
  version: 1,
  run: async (ctx, n: number) => {
    await ctx.awaitSignal('never', { timeoutSeconds: 7200 });
    return n * 2;
  },
});
const parentFlow = defineFlow({
  name: 'parent-of-two',
  version: 1,
  run: async (ctx, mode: 'propagate' | 'abandon') => {
    const kid = await ctx.child(childFlow, 21, { cancellation: mode });
    return { kid };
  },
});
const quickChild = defineFlow({
  name: 'quick-child',
  version: 1,
  run: async (ctx, n: number) => (await ctx.action(hold, { seat: `c${n}` })).seat,
});
const awaitsChild = defineFlow({
  name: 'awaits-child',
  version: 1,
  run: async (ctx) => ({ got: await ctx.child(quickChild, 7) }),
});

describe(`cancellation, terminate and child flows (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [booking, childFlow, parentFlow, quickChild, awaitsChild],
      actions: [hold, free, charge],
    });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  it('cooperative cancellation interrupts the wait; the flow compensates in its cleanup window and ends Cancelled', async () => {
    const { runId } = await t.engine.startFlow(booking, '12A');
    await t.drive(runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    await t.engine.cancel(runId, { reason: 'customer changed their mind', cleanupSeconds: 60 });
    const done = await t.drive(runId, { skipTime: false });
    expect(done.run.status).toBe('Cancelled');
    expect(done.run.cancelReason).toBe('customer changed their mind');
    expect(log).toContain('free 12A');
    expect(log).not.toContain('charge');
    expect(done.compensations.map((c) => [c.name, c.status])).toEqual([['free-seat', 'Completed']]);
  });

  it('terminate closes the run at once, with no cleanup', async () => {
    const { runId } = await t.engine.startFlow(booking, '14C');
    await t.drive(runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    expect(await t.engine.terminate(runId, { reason: 'fraud' })).toEqual({ terminated: true });
    const d = await t.engine.getRun(runId);
    expect(d?.run.status).toBe('Terminated');
    expect(log).not.toContain('free 14C');
    expect(await t.engine.terminate(runId, { reason: 'again' })).toEqual({ terminated: false });
  });

  it('a parent awaits its child and gets its result', async () => {
    const d = await t.runToCompletion(awaitsChild, null);
    expect(d.run).toMatchObject({ status: 'Completed', output: { got: 'c7' } });
    const child = d.actions.find((s) => s.kind === 'child');
    expect(child).toMatchObject({ name: 'quick-child', status: 'Completed', output: 'c7' });
  });

  it('cancelling a parent reaches a child started with cancellation "propagate", not one with "abandon"', async () => {
    const prop = await t.engine.startFlow(parentFlow, 'propagate');
    const aband = await t.engine.startFlow(parentFlow, 'abandon');
    for (const { runId } of [prop, aband])
      await t.drive(runId, {
        skipTime: false,
        until: (d) => d.actions.some((s) => s.kind === 'child') && d.run.status === 'Waiting',
      });
    const childOf = async (parent: string) =>
      (await t.db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: parent } })).id;
    const [propChild, abandChild] = [await childOf(prop.runId), await childOf(aband.runId)];
    await t.drive(propChild, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    await t.drive(abandChild, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    await t.engine.cancel(prop.runId, { reason: 'stop', cleanupSeconds: 30 });
    await t.engine.cancel(aband.runId, { reason: 'stop', cleanupSeconds: 30 });
    expect((await t.drive(propChild, { skipTime: false })).run.status).toBe('Cancelled');
    expect((await t.drive(prop.runId, { skipTime: false })).run.status).toBe('Cancelled');
    expect((await t.drive(aband.runId, { skipTime: false })).run.status).toBe('Cancelled');
    expect((await t.engine.getRun(abandChild))?.run.status).toBe('Waiting');
    expect((await t.engine.getRun(abandChild))?.run.cancelRequestedAt).toBeNull();
  });
});
