import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../src/index.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { testDbKind } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';

let sabotage = true;
let sabotageKick = false;
let runs = 0;
const work = defineAction({ name: 'kick-work', run: async () => (runs++, { ok: true }) });
const flow = defineFlow({ name: 'kickable', version: 1, run: async (ctx) => ctx.action(work, null) });
const stale = defineFlow({
  name: 'kickable-reclaim',
  version: 1,
  run: async (ctx) => ctx.action(work, null).reclaimStaleAfter(60),
});

describe(`kick (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [flow, stale],
      actions: [work],
      hooks: {
        stepClaimed: async (tx) => {
          if (!sabotage) return;
          await tx.$executeRawUnsafe('select 1 from no_such_table').catch(() => undefined);
        },
        runKicked: async (tx) => {
          if (!sabotageKick) return;
          await tx.$executeRawUnsafe('select 1 from no_such_table').catch(() => undefined);
        },
      },
    });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  it('recovers a run whose resume was lost once its cause is fixed', async () => {
    const { runId } = await t.engine.startFlow(flow, null);
    await t.drive(runId, { skipTime: false, until: (d) => d.run.stuckReason !== null });
    sabotage = false;
    expect(await t.engine.kick(runId)).toEqual({ kicked: true });
    const done = await t.drive(runId, { skipTime: false });
    expect(done.run.status).toBe('Completed');
    expect(done.events.map((e) => e.type)).toContain('run.kicked');
  });

  it('skips a Running step not past its reclaim deadline, and reaches it once it is', async () => {
    t.faults.crashAfterClaim('kick-work');
    const before = runs;
    const { runId } = await t.engine.startFlow(stale, null);
    await t.drive(runId, { skipTime: false, until: (d) => d.actions[0]?.status === 'Running' });
    const skipped = await t.engine.kick(runId);
    expect(skipped).toMatchObject({
      kicked: false,
      reason: expect.stringMatching(/^step 1 \(kick-work\) is Running until its reclaim deadline/) as unknown,
    });
    expect(runs).toBe(before);
    t.clock.advance(61_000);
    expect(await t.engine.kick(runId)).toEqual({ kicked: true });
    const done = await t.drive(runId, { skipTime: false });
    expect(done.run.status).toBe('Completed');
    expect(done.actions[0]).toMatchObject({ status: 'Completed', attempts: 2 });
  });

  it('a kick whose refill did not commit says so (claim_not_committed) and changes nothing', async () => {
    sabotage = true;
    const { runId } = await t.engine.startFlow(flow, null);
    await t.drive(runId, { skipTime: false, until: (d) => d.run.stuckReason !== null });
    // The worker records the run stuck, then acknowledges its job in a statement of its own: until that
    // lands, the run still has its start job, which would be counted below as one the kick sent.
    await waitFor('the stuck run to have no job', async () =>
      (await t.db.prisma.job.count({ where: { run_id: runId } })) === 0 ? true : undefined,
    );
    await t.db.prisma.flowRun.update({ where: { id: runId }, data: { repair_count: 3 } });
    sabotage = false;
    sabotageKick = true;
    try {
      const r = await t.engine.kick(runId);
      expect(r).toMatchObject({ kicked: false, reason: expect.stringMatching(/claim_not_committed/) as unknown });
    } finally {
      sabotageKick = false;
    }
    const anomaly = await t.db.prisma.anomalyLog.findFirstOrThrow({
      where: { run_id: runId, code: 'claim_not_committed', site: 'kick' },
    });
    expect(anomaly).toMatchObject({ name: 'kickable', details: { status: 'Waiting', repair_count: 3 } });
    const run = await t.db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(run.repair_count).toBe(3);
    expect(await t.db.prisma.job.count({ where: { run_id: runId } })).toBe(0);
    expect(await t.db.prisma.flowEvent.count({ where: { run_id: runId, type: 'run.kicked' } })).toBe(0);
    // Kicked again once the cause is gone: refilled, and the run completes.
    expect(await t.engine.kick(runId)).toEqual({ kicked: true });
    expect((await t.db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).repair_count).toBe(0);
    expect((await t.drive(runId, { skipTime: false })).run.status).toBe('Completed');
  });

  it('refuses a finished or unknown run with a clear error', async () => {
    const d = await t.runToCompletion(flow, null);
    await expect(t.engine.kick(d.run.id)).rejects.toMatchObject({ code: 'run_not_open' });
    await expect(t.engine.kick('00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({
      code: 'run_not_found',
    });
  });
});
