import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow, NonRetryableError } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { planRollback } from '../../../src/runtime/plan-rollback.ts';
import { findRun } from '../../../src/store/find-run.ts';
import { FaultPlan } from '../../../src/testing/fault-plan.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';

/** Attacks on the run expiry that the engine withstood (kept as guards). */
const log: string[] = [];
const reserve = defineAction({
  name: 'ax-hg-reserve',
  run: async (i: { id: string }) => (log.push(`reserve ${i.id}`), i),
});
const unreserve = defineAction({
  name: 'ax-hg-unreserve',
  run: async (i: { id: string }) => (log.push(`unreserve ${i.id}`), i),
});
const charge = defineAction({
  name: 'ax-hg-charge',
  run: async (i: { id: string }) => (log.push(`charge ${i.id}`), i),
});
let flakyFailures = 0;
const flaky = defineAction({
  name: 'ax-hg-flaky',
  retry: { maxAttempts: 5, backoff: { initialMs: 600_000, jitter: false } },
  run: async (i: { id: string }) => {
    log.push(`flaky ${i.id}`);
    if (flakyFailures-- > 0) throw new Error('upstream down');
    return i;
  },
});
const branchGates = { x: gate(), y: gate() };
const branch = (name: 'x' | 'y') =>
  defineAction({
    name: `ax-hg-branch-${name}`,
    run: async (i: { id: string }) => {
      log.push(`branch ${name} started ${i.id}`);
      await branchGates[name].promise;
      return { done: name };
    },
  });
const branchX = branch('x');
const branchY = branch('y');

/** ctx.uuid, a reclaimable step, then a signal wait: the planning replay must write none of it. */
const planned = defineFlow({
  name: 'ax-hg-planned',
  version: 1,
  run: async (ctx, input: { id: string }) => {
    try {
      const key = ctx.uuid();
      await ctx.action(reserve, { id: input.id }).compensateWith(unreserve, (o) => ({ id: o.id }));
      await ctx.action(charge, { id: `${input.id}:${key}` }).reclaimStaleAfter(30);
      ctx.now();
      await ctx.awaitSignal('go', { timeoutSeconds: 3600 });
      return { ok: true };
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});
const retrying = defineFlow({
  name: 'ax-hg-retrying',
  version: 1,
  run: async (ctx, input: { id: string }) => {
    try {
      await ctx.action(reserve, input).compensateWith(unreserve, (o) => ({ id: o.id }));
      return await ctx.action(flaky, input);
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});
const parallel = defineFlow({
  name: 'ax-hg-parallel',
  version: 1,
  run: async (ctx, input: { id: string }) => {
    try {
      await ctx.action(reserve, input).compensateWith(unreserve, (o) => ({ id: o.id }));
      return await ctx.parallel([ctx.action(branchX, input), ctx.action(branchY, input)]);
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});
const decline = defineAction({
  name: 'ax-hg-decline',
  run: async (): Promise<null> => {
    throw new NonRetryableError('declined');
  },
});

describe(`adversarial expiry: what held (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    branchGates.x.open();
    branchGates.y.open();
    await db.close();
  });

  const snapshot = async (runId: string) => ({
    run: await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } }),
    actions: await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } }),
    comps: await db.prisma.compensationRun.findMany({ where: { run_id: runId } }),
    events: await db.prisma.flowEvent.count({ where: { run_id: runId } }),
    jobs: await db.prisma.job.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } }),
    anomalies: await db.prisma.anomalyLog.count({ where: { run_id: runId } }),
    signals: await db.prisma.signal.findMany({ where: { run_id: runId } }),
    timers: await db.prisma.timer.count({ where: { run_id: runId } }),
  });

  it('the planning replay writes nothing and runs nothing: stale reclaimable Running step, buffered signal, ctx values', async () => {
    const clock = new TestClock();
    const faults = new FaultPlan(db).crashAfterClaim('ax-hg-charge');
    const e = bareEngine(db, {
      flows: [planned],
      actions: [reserve, unreserve, charge],
      clock,
      faults: faults.faults,
    });
    const { runId } = await e.startFlow(planned, { id: 'p' }, { expiresInSeconds: 60 });
    await expect(executeRun(e.runtime, runId)).rejects.toThrow(/simulated crash/);
    await e.signal(runId, 'go', { early: true });
    clock.advance(61_000); // past the run's deadline and the charge's reclaim deadline
    const before = await snapshot(runId);
    expect(before.actions.map((a) => [a.name, a.status])).toContainEqual(['ax-hg-charge', 'Running']);
    const logBefore = log.length;
    const run = await findRun(db.prisma, runId);
    const plan = await planRollback(e.runtime, run!, { timeoutMs: 10_000 });
    expect(plan).toMatchObject({ ok: true, compensations: [{ name: 'ax-hg-unreserve' }] });
    expect(await snapshot(runId)).toEqual(before);
    expect(log.length).toBe(logBefore);
  });

  it('a run expired while a retry backoff is pending: the step is interrupted, not re-run, and the run ends Expired', async () => {
    const clock = new TestClock();
    const e = bareEngine(db, { flows: [retrying], actions: [reserve, unreserve, flaky], clock });
    flakyFailures = 1;
    const { runId } = await e.startFlow(retrying, { id: 'r' }, { expiresInSeconds: 60 });
    expect(await executeRun(e.runtime, runId)).toBe('parked');
    clock.advance(61_000);
    expect((await e.sweepExpiredRuns()).expired).toEqual([runId]);
    for (let i = 0; i < 3; i++) await executeRun(e.runtime, runId);
    clock.advance(600_000); // the retry's wake
    await executeRun(e.runtime, runId);
    const s = await snapshot(runId);
    expect(s.run.status).toBe('Expired');
    expect(s.actions.find((a) => a.name === 'ax-hg-flaky')).toMatchObject({ status: 'Cancelled', attempts: 1 });
    expect(log.filter((l) => l === 'flaky r')).toHaveLength(1);
    expect(log.filter((l) => l === 'unreserve r')).toHaveLength(1);
  });

  it('a run expired with two parallel branches Running: both are Expired, their late results rejected, the run ends Expired', async () => {
    const clock = new TestClock();
    const e = bareEngine(db, { flows: [parallel], actions: [reserve, unreserve, branchX, branchY], clock });
    const { runId } = await e.startFlow(parallel, { id: 'q' }, { expiresInSeconds: 60 });
    const live = executeRun(e.runtime, runId);
    // The case under test needs both branches Running when the sweep comes: wait for it, or fail.
    await waitFor(
      () =>
        `the live replay to start both branches (started: ${log.filter((l) => l.startsWith('branch')).join(', ') || 'none'})`,
      async () => (log.includes('branch x started q') && log.includes('branch y started q') ? true : undefined),
      30_000,
    );
    clock.advance(61_000);
    expect((await e.sweepExpiredRuns()).expired).toEqual([runId]);
    branchGates.x.open();
    branchGates.y.open();
    await live.catch(() => undefined);
    for (let i = 0; i < 3; i++) await executeRun(e.runtime, runId);
    const s = await snapshot(runId);
    expect(s.run.status).toBe('Expired');
    expect(s.actions.filter((a) => a.name.startsWith('ax-hg-branch')).map((a) => [a.status, a.output])).toEqual([
      ['Expired', null],
      ['Expired', null],
    ]);
    expect(log.filter((l) => l === 'unreserve q')).toHaveLength(1);
  });

  it('a terminal run is never swept, and an expired one is expired once', async () => {
    const clock = new TestClock();
    const flow = defineFlow({
      name: 'ax-hg-fails',
      version: 1,
      run: async (ctx) => ctx.action(decline, null),
    });
    const e = bareEngine(db, { flows: [flow, retrying], actions: [decline, reserve, unreserve, flaky], clock });
    const { runId } = await e.startFlow(flow, null, { expiresInSeconds: 10 });
    expect(await executeRun(e.runtime, runId)).toBe('finished');
    clock.advance(11_000);
    expect(await e.sweepExpiredRuns()).toEqual({ expired: [], failed: [] });
    const s = await snapshot(runId);
    expect(s.run).toMatchObject({ status: 'Failed', expired_at: null, expiry_attempts: 0, stuck_reason: null });
  });
});
