import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../src/index.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { testDbKind } from './support/test-database.ts';

const work = defineAction({ name: 'doc-work', run: async () => ({ ok: true }) });
const plain = defineFlow({ name: 'doc-plain', version: 1, run: async (ctx) => ctx.action(work, null) });
const napper = defineFlow({
  name: 'doc-nap',
  version: 1,
  run: async (ctx) => {
    await ctx.sleep(600);
    return ctx.action(work, null);
  },
});
const other = defineAction({ name: 'doc-other', run: async () => ({ ok: true }) });
const undo = defineAction({ name: 'doc-undo', run: async () => ({ undone: true }) });
const refuse = defineAction({
  name: 'doc-refuse',
  retry: { maxAttempts: 1 },
  run: async (): Promise<null> => {
    throw new Error('refused');
  },
});
const inParallel = defineFlow({
  name: 'doc-parallel',
  version: 1,
  run: async (ctx) =>
    ctx.parallel([ctx.action(work, null).reclaimStaleAfter(30), ctx.action(other, null).reclaimStaleAfter(30)]),
});
const undoing = defineFlow({
  name: 'doc-undoing',
  version: 1,
  run: async (ctx) => {
    try {
      await ctx
        .action(other, null)
        .compensateWith(undo, () => null)
        .reclaimCompensationStaleAfter(30);
      return await ctx.action(refuse, null);
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});
let flakyCalls = 0;
const flaky = defineAction({
  name: 'doc-flaky',
  retry: { maxAttempts: 3, backoff: { initialMs: 30_000, maxMs: 30_000 } },
  run: async () => {
    flakyCalls += 1;
    if (flakyCalls === 1) throw new Error('the payment provider timed out');
    return { ok: true };
  },
});
const retrying = defineFlow({ name: 'doc-retrying', version: 1, run: async (ctx) => ctx.action(flaky, null) });
const listening = defineFlow({
  name: 'doc-listening',
  version: 1,
  run: async (ctx) => ({ got: await ctx.awaitSignal('go', { timeoutSeconds: 600 }) }),
});
const reclaimable = defineFlow({
  name: 'doc-reclaim',
  version: 1,
  run: async (ctx) => ctx.action(work, null).reclaimStaleAfter(30),
});

describe(`the doctor, R1-R3 (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [plain, napper, reclaimable, inParallel, undoing, retrying, listening],
      actions: [work, other, undo, refuse, flaky],
      config: { repair: { grace_seconds: 60, budget: 1 } },
    });
  });
  afterAll(async () => {
    await t.closeAll();
  });
  const loseJobs = (runId: string) => t.db.prisma.job.deleteMany({ where: { run_id: runId } });
  // The worker's round that reached the state may still be writing the run's next wake: stopping the
  // workers waits for it to end (a fixed pause did not, on a loaded machine). `drive` starts them again.
  const quiet = () => t.engine.stopWorkers();

  it('R1: a run whose start job was lost is re-dispatched after the grace, once per budget, and kick refills it', async () => {
    await t.engine.stopWorkers();
    const { runId } = await t.engine.startFlow(plain, null);
    await loseJobs(runId);
    expect((await t.engine.sweepDoctor()).redispatched).toEqual([]);
    t.clock.advance(61_000);
    expect((await t.engine.sweepDoctor()).redispatched).toEqual([{ runId, rule: 'R1' }]);
    // A run with a job queued is left alone.
    expect((await t.engine.sweepDoctor()).redispatched).toEqual([]);
    await loseJobs(runId);
    // The budget (1) is spent: no more re-dispatches until a kick refills it.
    expect((await t.engine.sweepDoctor()).redispatched).toEqual([]);
    expect(await t.engine.kick(runId)).toEqual({ kicked: true });
    expect((await t.drive(runId, { skipTime: false })).run.status).toBe('Completed');
    const events = (await t.engine.getRun(runId))?.events.map((e) => e.type) ?? [];
    expect(events.filter((e) => e === 'doctor.redispatched')).toHaveLength(1);
  });

  it('R2: a Waiting run whose timer is due but whose wake was lost is woken', async () => {
    const { runId } = await t.engine.startFlow(napper, null);
    await t.drive(runId, { skipTime: false, until: (d) => d.run.waitingFor?.startsWith('timer') === true });
    await loseJobs(runId);
    t.clock.advance(601_000);
    expect((await t.engine.sweepDoctor()).redispatched).toEqual([{ runId, rule: 'R2' }]);
    expect((await t.drive(runId, { skipTime: false })).run.status).toBe('Completed');
  });

  it('R2: a run whose action retry is due but whose wake was lost is woken, and the retry runs', async () => {
    const { runId } = await t.engine.startFlow(retrying, null);
    await t.drive(runId, { skipTime: false, until: (d) => d.actions[0]?.status === 'Failed' });
    await quiet();
    await loseJobs(runId);
    expect((await t.engine.sweepDoctor()).redispatched).toEqual([]);
    t.clock.advance(31_000);
    expect((await t.engine.sweepDoctor()).redispatched).toEqual([{ runId, rule: 'R2' }]);
    const d = await t.drive(runId, { skipTime: false });
    expect(d.run.status).toBe('Completed');
    expect(d.actions[0]).toMatchObject({ status: 'Completed', attempts: 2 });
  });

  it('R2: a run whose signal wait timed out but whose wake was lost is woken', async () => {
    const { runId } = await t.engine.startFlow(listening, null);
    await t.drive(runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    await quiet();
    await loseJobs(runId);
    t.clock.advance(601_000);
    expect((await t.engine.sweepDoctor()).redispatched).toEqual([{ runId, rule: 'R2' }]);
    const d = await t.drive(runId, { skipTime: false });
    expect(d.run).toMatchObject({ status: 'Completed', output: { got: null } });
  });

  it('R3: a Running action past its reclaim deadline, whose worker died, is re-dispatched and completes', async () => {
    t.faults.crashAfterClaim('doc-work');
    const { runId } = await t.engine.startFlow(reclaimable, null);
    await t.drive(runId, { skipTime: false, until: (d) => d.actions[0]?.status === 'Running' });
    await quiet();
    await loseJobs(runId);
    expect((await t.engine.sweepDoctor()).redispatched).toEqual([]);
    t.clock.advance(31_000);
    expect((await t.engine.sweepDoctor()).redispatched).toEqual([{ runId, rule: 'R3' }]);
    const d = await t.drive(runId, { skipTime: false });
    expect(d.run.status).toBe('Completed');
    expect(d.actions[0]).toMatchObject({ status: 'Completed', attempts: 2 });
  });

  it('R3 leaves parallel actions and compensations passive: past their deadline they wait for the next claimer', async () => {
    t.faults.crashAfterClaim('doc-work');
    const par = await t.engine.startFlow(inParallel, null);
    await t.drive(par.runId, {
      skipTime: false,
      until: (d) => d.actions.some((a) => a.name === 'doc-work' && a.status === 'Running'),
    });
    t.faults.crashAfterClaim('doc-undo');
    const comp = await t.engine.startFlow(undoing, null);
    await t.drive(comp.runId, { skipTime: false, until: (d) => d.compensations[0]?.status === 'Running' });
    await quiet();
    await loseJobs(par.runId);
    await loseJobs(comp.runId);
    t.clock.advance(31_000);
    const swept = (await t.engine.sweepDoctor()).redispatched.map((r) => r.runId);
    expect(swept).not.toContain(par.runId);
    expect(swept).not.toContain(comp.runId);
    // Passive reclaim: the next claimer (here a kick) gets in, and both runs finish.
    const k = await t.engine.kick(par.runId);
    expect(k).toEqual({ kicked: true });
    expect(await t.engine.kick(comp.runId)).toEqual({ kicked: true });
    expect((await t.drive(par.runId, { skipTime: false })).run.status).toBe('Completed');
    const undone = await t.drive(comp.runId, { skipTime: false });
    expect(undone.run.status).toBe('Compensated');
    expect(undone.compensations[0]).toMatchObject({ status: 'Completed', attempts: 2 });
  });
});
