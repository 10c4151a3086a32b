import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../src/index.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { testDbKind } from './support/test-database.ts';
import { lateOutcomeTurnedAway } from './support/late-outcome.ts';
import { waitFor } from './support/wait-for.ts';

let release: () => void = () => undefined;
const log: string[] = [];
const reserve = defineAction({ name: 'm-reserve', run: async () => (log.push('reserve'), { id: 'r1' }) });
const unreserve = defineAction({
  name: 'm-unreserve',
  run: async (i: { id: string }) => (log.push(`unreserve ${i.id}`), { ok: true }),
});
const slowShip = defineAction({
  name: 'm-ship',
  run: async () => {
    log.push('ship started');
    await new Promise<void>((r) => (release = r));
    log.push('ship finished late');
    return { shipped: true };
  },
});
const flow = defineFlow({
  name: 'monitored',
  version: 1,
  run: async (ctx) => {
    try {
      await ctx.action(reserve, null).compensateWith(unreserve, (o) => ({ id: o.id }));
      return await ctx.action(slowShip, null).expiresIn(30);
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

describe(`the expiration monitor over steps (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [flow], actions: [reserve, unreserve, slowShip] });
    t.engine.startWorkers();
  });
  afterAll(async () => {
    release();
    await t.closeAll();
  });

  it('an overdue step is marked Expired, the run fails as a business failure and compensates; the late success is rejected', async () => {
    const { runId } = await t.engine.startFlow(flow, null);
    await waitFor('the slow step to run', async () => (log.includes('ship started') ? true : undefined));
    expect(await t.engine.sweepExpiredSteps()).toEqual({ expired: 0 });
    t.clock.advance(31_000);
    expect(await t.engine.sweepExpiredSteps()).toEqual({ expired: 1 });
    release();
    const done = await t.drive(runId, { skipTime: false });
    expect(done.run.status).toBe('Compensated');
    expect(done.actions.find((a) => a.name === 'm-ship')).toMatchObject({ status: 'Expired', output: null });
    expect(log).toContain('unreserve r1');
    // The late success is turned away and journaled (the sweep's wake replays beside the hung worker).
    expect((await lateOutcomeTurnedAway(t.db, runId)).length).toBeGreaterThan(0);
    expect(done.events.map((e) => e.type)).toContain('action.expired');
  });

  it('a step that completed just before the sweep is not demoted', async () => {
    const { runId } = await t.engine.startFlow(flow, null);
    await waitFor('the slow step to run', async () =>
      log.filter((l) => l === 'ship started').length === 2 ? true : undefined,
    );
    release();
    const done = await t.drive(runId, { skipTime: false });
    expect(done.run.status).toBe('Completed');
    t.clock.advance(31_000);
    expect(await t.engine.sweepExpiredSteps()).toEqual({ expired: 0 });
    expect((await t.engine.getRun(runId))?.actions.find((a) => a.name === 'm-ship')?.status).toBe('Completed');
  });

  it('the monitor loop finds an overdue step by itself', async () => {
    const before = log.filter((l) => l === 'ship started').length;
    const { runId } = await t.engine.startFlow(flow, null);
    await waitFor('the slow step to run', async () =>
      log.filter((l) => l === 'ship started').length > before ? true : undefined,
    );
    t.engine.startMonitor({ intervalMs: 100 });
    try {
      t.clock.advance(31_000);
      await waitFor('the monitor to expire the step', async () =>
        (await t.engine.getRun(runId))?.actions.find((a) => a.name === 'm-ship')?.status === 'Expired'
          ? true
          : undefined,
      );
    } finally {
      await t.engine.stopMonitor();
    }
    release();
    expect((await t.drive(runId, { skipTime: false })).run.status).toBe('Compensated');
    expect(await t.db.prisma.lease.count({ where: { name: 'monitor' } })).toBe(0);
  });
});
