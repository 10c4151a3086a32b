import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../src/index.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { testDbKind } from './support/test-database.ts';

/**
 * Seed 000's recovery matrix with a worker killed right after its claim (the test kit's crash: the
 * row stays Running and the job is not acknowledged, exactly what a SIGKILL leaves behind).
 */
const ran = new Map<string, number>();
const step = defineAction({
  name: 'rm-step',
  run: async (i: { key: string }) => (ran.set(i.key, (ran.get(i.key) ?? 0) + 1), { ok: i.key }),
});
const undo = defineAction({ name: 'rm-undo', run: async () => ({ undone: true }) });
const first = defineAction({ name: 'rm-first', run: async () => ({ id: 'f' }) });
const build = (name: string, opts: { reclaim?: number; expires?: number }) =>
  defineFlow({
    name,
    version: 1,
    run: async (ctx, key: string) => {
      try {
        await ctx.action(first, null).compensateWith(undo, () => null);
        let s = ctx.action(step, { key });
        if (opts.reclaim) s = s.reclaimStaleAfter(opts.reclaim);
        if (opts.expires) s = s.expiresIn(opts.expires);
        return await s;
      } catch (err) {
        await ctx.compensate();
        throw err;
      }
    },
  });
const reclaimOff = build('rm-reclaim-off', {});
const reclaimOn = build('rm-reclaim-on', { reclaim: 30 });
const monitorOn = build('rm-monitor-on', { expires: 30 });

describe(`recovery matrix after a killed worker (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [reclaimOff, reclaimOn, monitorOn],
      actions: [step, undo, first],
      config: { worker: { lease_seconds: 20 } },
    });
  });
  afterAll(async () => {
    await t.closeAll();
  });
  const killedRun = async (flow: typeof reclaimOff, key: string) => {
    t.faults.crashAfterClaim('rm-step');
    const { runId } = await t.engine.startFlow(flow, key);
    await t.drive(runId, {
      skipTime: false,
      until: (d) => d.actions.some((a) => a.name === 'rm-step' && a.status === 'Running'),
    });
    // Past the job's lease: the queue redelivers the run's wake to a live worker.
    t.clock.advance(21_000);
    return runId;
  };

  it('reclaim off, monitor off: the run waits for a human, visibly, and the step never runs twice', async () => {
    const runId = await killedRun(reclaimOff, 'off');
    const d = await t.drive(runId, {
      skipTime: false,
      until: (x) => x.run.status === 'Waiting' && x.run.waitingFor !== null,
    });
    expect(d.run.waitingFor).toMatch(
      /^step 2 \(rm-step\) is running on another worker .*reclaim is off for this step, so if that worker died the run waits for an operator$/,
    );
    t.clock.advance(3600_000);
    await new Promise((r) => setTimeout(r, 150));
    expect((await t.engine.getRun(runId))?.run.status).toBe('Waiting');
    expect(ran.get('off')).toBeUndefined();
    // Kick cannot help either: no deadline tells a dead worker from a slow one.
    expect(await t.engine.kick(runId)).toMatchObject({ kicked: false });
  });

  it('reclaim on: once the reclaim deadline passed, the next delivery runs the step again and the run completes', async () => {
    const runId = await killedRun(reclaimOn, 'on');
    t.clock.advance(31_000);
    const d = await t.drive(runId);
    expect(d.run.status).toBe('Completed');
    expect(d.actions.find((a) => a.name === 'rm-step')).toMatchObject({ status: 'Completed', attempts: 2 });
    expect(ran.get('on')).toBe(1);
  });

  it('monitor on: the stuck step is Expired, the run fails as a business failure and compensates', async () => {
    const runId = await killedRun(monitorOn, 'mon');
    t.clock.advance(31_000);
    expect(await t.engine.sweepExpiredSteps()).toEqual({ expired: 1 });
    const d = await t.drive(runId);
    expect(d.run.status).toBe('Compensated');
    expect(d.actions.find((a) => a.name === 'rm-step')?.status).toBe('Expired');
    expect(d.compensations.map((c) => [c.name, c.status])).toEqual([['rm-undo', 'Completed']]);
  });
});
