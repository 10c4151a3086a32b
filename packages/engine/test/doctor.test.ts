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
const reclaimable = defineFlow({
  name: 'doc-reclaim',
  version: 1,
  run: async (ctx) => ctx.action(work, null).reclaimStaleAfter(30),
});

describe(`the doctor, R1-R3 (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [plain, napper, reclaimable],
      actions: [work],
      config: { repair: { grace_seconds: 60, budget: 1 } },
    });
  });
  afterAll(async () => {
    await t.closeAll();
  });
  const loseJobs = (runId: string) => t.db.prisma.job.deleteMany({ where: { run_id: runId } });

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

  it('R3: a Running action past its reclaim deadline, whose worker died, is re-dispatched and completes', async () => {
    t.faults.crashAfterClaim('doc-work');
    const { runId } = await t.engine.startFlow(reclaimable, null);
    await t.drive(runId, { skipTime: false, until: (d) => d.actions[0]?.status === 'Running' });
    await new Promise((r) => setTimeout(r, 50));
    await loseJobs(runId);
    expect((await t.engine.sweepDoctor()).redispatched).toEqual([]);
    t.clock.advance(31_000);
    expect((await t.engine.sweepDoctor()).redispatched).toEqual([{ runId, rule: 'R3' }]);
    const d = await t.drive(runId, { skipTime: false });
    expect(d.run.status).toBe('Completed');
    expect(d.actions[0]).toMatchObject({ status: 'Completed', attempts: 2 });
  });
});
