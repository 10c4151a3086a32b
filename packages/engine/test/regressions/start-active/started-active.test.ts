import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { insertStartedRun } from '../../../src/store/insert-started-run.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

const ran: string[] = [];
const step = (name: string) => defineAction({ name, run: async (n: number) => (ran.push(name), n + 1) });
const [a, b] = [step('active-a'), step('active-b')];
const flow = defineFlow({
  name: 'started-active',
  version: 1,
  run: async (ctx, n: number) => ctx.action(b, await ctx.action(a, n)),
});

/**
 * ADR 0041: a start whose run this process's pool takes at once writes the run already active
 * (Running, started, version 1, `run.running`), and the pool's replay begins from that row instead of
 * loading it. The row must be exactly what the load would have made, and a starter that dies before
 * its replay must leave a run any worker finishes with one `run.running`.
 */
describe(`a run its start wrote active (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [flow], actions: [a, b], config: { worker: { lease_seconds: 60 } } });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  const history = async (runId: string) =>
    (await t.db.prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } })).map((e) => e.type);

  it('handed to its own pool: runs without a load, and its row and history are what a load would have made', async () => {
    t.engine.startWorkers();
    const { runId } = await t.engine.startFlow(flow, 1);
    const done = await waitFor('the run completes', async () => {
      const r = await t.engine.getRun(runId);
      return r?.run.status === 'Completed' ? r : undefined;
    });
    expect(done.run.output).toBe(3);
    const events = await history(runId);
    expect(events.slice(0, 2)).toEqual(['run.started', 'run.running']);
    expect(events.filter((e) => e === 'run.running')).toHaveLength(1);
    const row = await t.db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(row.started_at).toEqual(row.created_at);
    // Taken once and gone: nothing is left for a later delivery of the same job to find.
    expect(t.engine.runtime.startedActive.size).toBe(0);
    expect(await t.db.prisma.job.count({ where: { run_id: runId } })).toBe(0);
    await t.engine.stopWorkers();
  });

  it('the starter died before its replay: past the lease another worker runs it, one run.running, each step once', async () => {
    ran.length = 0;
    const now = t.clock.now();
    // What a start leased to a worker that then died writes: the run active, its wake leased to it.
    const { runId, loaded } = await insertStartedRun(t.db.prisma, {
      flowName: flow.name,
      flowVersion: flow.version,
      input: 5,
      businessKey: null,
      tags: [],
      expiresAt: null,
      runTimeoutAt: null,
      now,
      lease: { workerId: 'died-after-its-start', leaseSeconds: 60 },
    });
    expect(loaded?.run).toMatchObject({ id: runId, status: 'Running', version: 1, started_at: now });
    expect(loaded?.activeVersion).toBe(1);
    expect(await history(runId)).toEqual(['run.started', 'run.running']);

    t.clock.advance(61_000);
    const done = await t.drive(runId, { skipTime: false });
    expect(done.run.status).toBe('Completed');
    expect(done.run.output).toBe(7);
    expect(ran).toEqual(['active-a', 'active-b']);
    const events = await history(runId);
    expect(events.filter((e) => e === 'run.running')).toHaveLength(1);
    expect(events.at(-1)).toBe('run.completed');
    expect(await t.db.prisma.job.count({ where: { run_id: runId } })).toBe(0);
    await t.engine.stopWorkers();
  });

  it('a start with no pool to take it writes the run Pending, with no run.running, for any worker', async () => {
    const { runId } = await t.engine.startFlow(flow, 1);
    const row = await t.db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(row).toMatchObject({ status: 'Pending', started_at: null, version: 0 });
    expect(await history(runId)).toEqual(['run.started']);
    const done = await t.drive(runId);
    expect(done.run.status).toBe('Completed');
    expect((await history(runId)).filter((e) => e === 'run.running')).toHaveLength(1);
  });
});
