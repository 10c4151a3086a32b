import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../src/index.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { testDbKind } from './support/test-database.ts';

const released: string[] = [];
const reserve = defineAction({
  name: 'reserve-resource',
  run: async (i: { orderId: string }) => ({ reservationId: `res-${i.orderId}` }),
});
const release = defineAction({
  name: 'release-resource',
  run: async (i: { reservationId: string }) => {
    released.push(i.reservationId);
    return { released: true };
  },
});

/** Seed 001's reservation-deadline workflow, as written there. */
const reservation = defineFlow({
  name: 'reservation-deadline',
  version: 1,
  run: async (ctx, orderId: string) => {
    await ctx
      .action(reserve, { orderId })
      .expiresIn(30)
      .compensateWith(release, (o) => ({ reservationId: o.reservationId }));
    if ((await ctx.awaitSignal('confirm', { timeoutSeconds: 30 })) === null) {
      await ctx.compensate();
      return { status: 'expired' };
    }
    return { status: 'confirmed' };
  },
});

const napper = defineFlow({
  name: 'napper',
  version: 1,
  run: async (ctx) => {
    const before = ctx.now();
    await ctx.sleep(6 * 3600);
    return { slept: ctx.now().getTime() - before.getTime() };
  },
});

describe(`signals, timers and deadlines (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [reservation, napper], actions: [reserve, release] });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  it('seed 001: no confirm within 30 s releases the reservation and returns status expired', async () => {
    const { runId } = await t.engine.startFlow(reservation, 'order-123', {
      businessKey: 'order-123',
      runTimeoutSeconds: 300,
    });
    const waiting = await t.drive(runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    expect(waiting.run.waitingFor).toMatch(/^signal "confirm" until /);
    expect(waiting.actions.find((a) => a.name === 'reserve-resource')?.expiresAt).not.toBeNull();
    t.clock.advance(31_000);
    const done = await t.drive(runId);
    expect(done.run.status).toBe('Completed');
    expect(done.run.output).toEqual({ status: 'expired' });
    expect(released).toContain('res-order-123');
    expect(done.compensations.map((c) => [c.name, c.status])).toEqual([['release-resource', 'Completed']]);
  });

  it('seed 001: a confirm sent before the wait expires confirms, and nothing is released', async () => {
    const { runId } = await t.engine.startFlow(reservation, 'order-456', {
      businessKey: 'order-456',
      runTimeoutSeconds: 300,
    });
    await t.drive(runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    t.clock.advance(10_000);
    await t.engine.signal(runId, 'confirm');
    const done = await t.drive(runId, { skipTime: false });
    expect(done.run.output).toEqual({ status: 'confirmed' });
    expect(released).not.toContain('res-order-456');
    const wait = done.actions.find((a) => a.kind === 'signal');
    expect(wait).toMatchObject({ status: 'Completed', output: { value: true } });
  });

  it('a second start with the same business key is rejected (reject-duplicate)', async () => {
    await expect(t.engine.startFlow(reservation, 'order-123', { businessKey: 'order-123' })).rejects.toMatchObject({
      code: 'duplicate_business_key',
    });
  });

  it('a signal is consumed by exactly one wait; a finished run takes no more signals', async () => {
    // Both signals must be there before any replay: the earlier tests' workers would otherwise run the
    // run (and consume the first signal) between the two sends. drive() starts them again.
    await t.engine.stopWorkers();
    const { runId } = await t.engine.startFlow(reservation, 'order-789', { businessKey: 'order-789' });
    await t.engine.signal(runId, 'confirm', { by: 'a' });
    await t.engine.signal(runId, 'confirm', { by: 'b' });
    const done = await t.drive(runId, { skipTime: false });
    expect(done.run.output).toEqual({ status: 'confirmed' });
    const signals = await t.db.prisma.signal.findMany({ where: { run_id: runId }, orderBy: { seq: 'asc' } });
    expect(signals.map((s) => [s.payload, s.status])).toEqual([
      [{ by: 'a' }, 'Consumed'],
      [{ by: 'b' }, 'Pending'],
    ]);
    await expect(t.engine.signal(runId, 'confirm')).rejects.toMatchObject({ code: 'run_not_open' });
  });

  it('a multi-hour durable timer holds no worker and fires when its time comes', async () => {
    const { runId } = await t.engine.startFlow(napper, null);
    const parked = await t.drive(runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    expect(parked.run.waitingFor).toMatch(/^timer until /);
    t.clock.advance(6 * 3600 * 1000 - 1000);
    await new Promise((r) => setTimeout(r, 150));
    expect((await t.engine.getRun(runId))?.run.status).toBe('Waiting');
    t.clock.advance(2000);
    const done = await t.drive(runId, { skipTime: false });
    expect(done.run.status).toBe('Completed');
    expect((done.run.output as { slept: number }).slept).toBeGreaterThanOrEqual(6 * 3600 * 1000);
  });

  it('the engine run timeout closes a run as TimedOut, without compensation', async () => {
    const { runId } = await t.engine.startFlow(reservation, 'order-t', {
      businessKey: 'order-t',
      runTimeoutSeconds: 10,
    });
    await t.drive(runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    t.clock.advance(11_000);
    const done = await t.drive(runId, { skipTime: false });
    expect(done.run.status).toBe('TimedOut');
    expect(done.compensations).toEqual([]);
    expect(released).not.toContain('res-order-t');
  });
});
