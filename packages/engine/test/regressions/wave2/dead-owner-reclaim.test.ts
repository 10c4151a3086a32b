import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';

/**
 * Issue 13, item 2 (b). Reclaim off (the default): a step Running with no reclaim deadline whose
 * worker is gone (its heartbeat stopped) must not leave the run Waiting with no reason and no
 * repair. The run says which step, which worker, since when; kick, engine.reclaimStep and the
 * doctor re-dispatch it with the normal claim (attempts + 1), and the old owner's late outcome is
 * rejected. While the owner is alive, nothing reclaims it.
 */
const gates = {
  'charge-k': { started: gate(), hang: gate() },
  'charge-d': { started: gate(), hang: gate() },
  'charge-r': { started: gate(), hang: gate() },
};
const calls: Record<string, number> = {};
const charge = (name: keyof typeof gates) =>
  defineAction({
    name,
    run: async () => {
      calls[name] = (calls[name] ?? 0) + 1;
      if (calls[name] === 1) {
        gates[name].started.open();
        await gates[name].hang.promise; // the first worker hangs here and then "dies"
        return { by: 'first' };
      }
      return { by: 'second' };
    },
  });
const chargeK = charge('charge-k');
const chargeD = charge('charge-d');
const chargeR = charge('charge-r');
const ship = defineAction({ name: 'ship', run: async () => 'shipped' });
const flowOf = (name: string, step: typeof chargeK) =>
  defineFlow({
    name,
    version: 1,
    run: async (ctx) => {
      const charged = await ctx.action(step, null);
      await ctx.action(ship, null);
      return charged;
    },
  });
const kickFlow = flowOf('dead-owner-kick', chargeK);
const doctorFlow = flowOf('dead-owner-doctor', chargeD);
const reclaimFlow = flowOf('dead-owner-reclaim-step', chargeR);
const flows = [kickFlow, doctorFlow, reclaimFlow];
const actions = [chargeK, chargeD, chargeR, ship];
// Generous for a loaded machine: a live worker's beat must never look 5 s old.
const worker = { heartbeat_interval_ms: 100, dead_after_seconds: 5 };

describe(`wave 2: a step held by a worker that is gone is stuck with a reason and repairable (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    for (const g of Object.values(gates)) g.hang.open();
    await db.close();
  });

  /**
   * A's beats stopped a minute ago: its last heartbeat is moved back past `dead_after_seconds`, as if the
   * test had waited that long after A's pool stopped without draining (which ends its beats, worker-pool.ts).
   * Set on the database clock, which is the one the monitor and the reclaim judge `heartbeat_at` by.
   */
  const lastBeatLongAgo = async (a: ReturnType<typeof bareEngine>) => {
    const aged = await db.prisma.$executeRaw`
      update "sagaflow"."workers" set heartbeat_at = now() - interval '1 minute'
       where id = ${a.runtime.workerId} and stopped_at is null`;
    expect(aged).toBe(1);
  };

  /** Worker A claims the run's first step and hangs in it; its pool stops without draining (its beats stop). */
  async function strandFirstStep(flow: typeof kickFlow, step: keyof typeof gates) {
    const a = bareEngine(db, { flows, actions, config: { worker } });
    a.startWorkers();
    const { runId } = await a.startFlow(flow, null);
    await gates[step].started.promise;
    return { a, runId };
  }

  it('kick: the stuck reason names step, worker and since when; kick reclaims it; the late outcome is rejected', async () => {
    const { a, runId } = await strandFirstStep(kickFlow, 'charge-k');
    const b = bareEngine(db, { flows, actions, config: { worker } });
    // The owner is alive: nothing reclaims its step.
    expect({ reclaim: await b.reclaimStep(runId), kick: await b.kick(runId) }).toMatchObject({
      reclaim: { reclaimed: false },
      kick: { kicked: false },
    });

    expect((await a.stopWorkers(10)).drained).toBe(false); // A is gone: no more heartbeats
    await lastBeatLongAgo(a);
    const reason = await waitFor('the run to say its step is held by a gone worker', async () => {
      await b.monitorPass({ doctor: false });
      const r = (await b.getRun(runId))?.run.stuckReason;
      return r?.startsWith('owner_gone') ? r : undefined;
    });
    expect(reason).toContain(`step 1 (charge-k) held by worker ${a.runtime.workerId} which is gone since `);
    // Becoming stuck is an event in the run's history, once.
    const stuck = await db.prisma.flowEvent.findMany({ where: { run_id: runId, type: 'run.stuck' } });
    expect(stuck.map((e) => (e.data as { reason: string }).reason)).toEqual([reason]);
    // The run row still says what the dead worker's replay left (Running): the reason is what tells.
    expect(['Running', 'Waiting']).toContain((await b.getRun(runId))?.run.status);

    const wakesBefore = await db.prisma.job.count({ where: { run_id: runId, locked_by: null } });
    expect(await b.kick(runId)).toEqual({ kicked: true });
    // One wake for the kick, not one more per reclaimed row: two replays would race for the step.
    expect((await db.prisma.job.count({ where: { run_id: runId, locked_by: null } })) - wakesBefore).toBe(1);
    b.startWorkers();
    const done = await waitFor('the run to complete', async () => {
      const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      return r.status === 'Completed' ? r : undefined;
    });
    gates['charge-k'].hang.open(); // the old owner comes back with its result: fenced off
    await waitFor('the late outcome to be fenced off', async () =>
      (await db.prisma.anomalyLog.count({
        where: { run_id: runId, name: 'charge-k', code: { in: ['outcome_rejected', 'write_refused'] } },
      })) > 0
        ? true
        : undefined,
    );
    await b.stopWorkers();
    const step = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, name: 'charge-k' } });
    expect({ run: done.status, output: done.output, step: [step.status, step.attempts, step.output] }).toEqual({
      run: 'Completed',
      output: { by: 'second' },
      step: ['Completed', 2, { by: 'second' }],
    });
  });

  it('engine.reclaimStep: refuses a malformed id and a live owner, then reclaims the step of a stopped worker; the run completes and says it is no longer stuck', async () => {
    const { a, runId } = await strandFirstStep(reclaimFlow, 'charge-r');
    const b = bareEngine(db, { flows, actions, config: { worker } });
    await expect(b.reclaimStep(runId, { stepId: 'not-a-uuid' })).rejects.toMatchObject({
      code: 'invalid_input',
      field: 'stepId',
    });
    const alive = await b.reclaimStep(runId);
    expect(alive).toMatchObject({ reclaimed: false });
    expect(alive.reclaimed ? '' : alive.reason).toContain('worker.dead_after_seconds');

    await a.stopWorkers(10);
    await lastBeatLongAgo(a);
    const stepRow = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, name: 'charge-r' } });
    await waitFor('the run to say its step is held by a gone worker', async () => {
      await b.monitorPass({ doctor: false });
      return (await b.getRun(runId))?.run.stuckReason?.startsWith('owner_gone') ? true : undefined;
    });
    expect(await b.reclaimStep(runId, { stepId: stepRow.id })).toEqual({ reclaimed: true, stepId: stepRow.id });
    b.startWorkers();
    const done = await waitFor('the run to complete', async () => {
      const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      return r.status === 'Completed' ? r : undefined;
    });
    await b.stopWorkers();
    gates['charge-r'].hang.open();
    const history = await db.prisma.flowEvent.findMany({
      where: { run_id: runId, type: { in: ['run.stuck', 'step.reclaimed', 'run.unstuck', 'run.completed'] } },
      orderBy: { id: 'asc' },
    });
    expect({ output: done.output, history: history.map((e) => e.type) }).toEqual({
      output: { by: 'second' },
      history: ['run.stuck', 'step.reclaimed', 'run.unstuck', 'run.completed'],
    });
  });

  it('the doctor reclaims a step whose worker is gone, and the run completes with the result of the new claim', async () => {
    const { a, runId } = await strandFirstStep(doctorFlow, 'charge-d');
    await a.stopWorkers(10);
    await lastBeatLongAgo(a);
    const b = bareEngine(db, { flows, actions, config: { worker, repair: { enabled: true } } });
    const pass = await waitFor('the doctor to reclaim the step', async () => {
      const p = await b.monitorPass({ doctor: true });
      return p.swept && p.doctor?.redispatched.some((r) => r.runId === runId && r.rule === 'R4') ? p : undefined;
    });
    expect(pass.swept).toBe(true);
    b.startWorkers();
    const done = await waitFor('the run to complete', async () => {
      const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      return r.status === 'Completed' ? r : undefined;
    });
    await b.stopWorkers();
    expect(done.output).toEqual({ by: 'second' });
    gates['charge-d'].hang.open();
  });
});
