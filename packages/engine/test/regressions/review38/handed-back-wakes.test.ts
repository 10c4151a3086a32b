import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { autocommitDb } from '../../../src/db/autocommit-db.ts';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow, type Engine } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { claimJobs, type DbJob } from '../../../src/store/claim-jobs.ts';
import { deleteJob, type JobAck } from '../../../src/store/delete-job.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { bareEngine, gate } from '../harness.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';

/**
 * ADR 0112 (review 38's D1 and D2): a worker whose code cannot run a run (no such flow, or an older
 * version of it) hands its wake back, leaves its steps alone, and says so on the run only while no
 * worker that can run it is replaying it; a worker that can run it takes the wake later; the doctor
 * re-wakes such a run whose wake is gone. Driven by hand (claims and replays called in turn, a test
 * clock): no pool, no sleep.
 */
const act = (name: string) => defineAction({ name, run: async () => ({ did: name }) });
const [a, b, c] = [act('r38h-a'), act('r38h-b'), act('r38h-c')];
let held: { promise: Promise<void>; open: () => void } | null = null;
let entered: (() => void) | null = null;
const gated = defineAction({
  name: 'r38h-gated',
  run: async () => {
    entered?.();
    await held?.promise;
    return { did: 'gated' };
  },
});
const v1 = defineFlow({
  name: 'r38h-flow',
  version: 1,
  run: async (ctx) => {
    await ctx.action(a, null);
    await ctx.awaitSignal('go', { timeoutSeconds: 3600 });
    await ctx.action(b, null);
    return { code: 1 };
  },
});
const v2 = defineFlow({
  name: 'r38h-flow',
  version: 2,
  run: async (ctx) => {
    await ctx.action(a, null);
    await ctx.awaitSignal('go', { timeoutSeconds: 3600 });
    await ctx.action(c, null);
    return { code: 2 };
  },
});
const slowV2 = defineFlow({
  name: 'r38h-slow',
  version: 2,
  run: async (ctx) => {
    await ctx.action(gated, null);
    await ctx.awaitSignal('go', { timeoutSeconds: 3600 });
    return { code: 2 };
  },
});
const slowV1 = defineFlow({ name: 'r38h-slow', version: 1, run: async () => ({ code: 1 }) });
const elsewhere = defineFlow({ name: 'r38h-elsewhere', version: 1, run: async () => null });
const actions = [a, b, c, gated];

describe(`a wake the worker's code cannot run is handed back (${testDbKind()})`, () => {
  let db: Database;
  const clock = new TestClock();
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });
  const engine = (flows: Parameters<typeof bareEngine>[1]['flows']) =>
    bareEngine(db, { flows, actions, clock, config: { repair: { grace_seconds: 60, budget: 1 } } });
  /** One claim by `worker`, as its pool makes it (flow names and versions), of the run's wakes only. */
  const claim = async (worker: Engine, runId: string): Promise<DbJob[]> => {
    const rt = worker.runtime;
    const jobs = await claimJobs(autocommitDb(rt), {
      workerId: rt.workerId,
      limit: 20,
      leaseSeconds: 60,
      now: clock.now(),
      flows: rt.registry.flowNames,
      versions: rt.registry.flowVersions,
    });
    return jobs.filter((j) => j.run_id === runId);
  };
  const ackOf = (worker: Engine, job: DbJob): JobAck => ({
    id: job.id,
    workerId: worker.runtime.workerId,
    done: false,
  });
  /** Claims the run's one due wake with `worker`, replays it there and acknowledges it, as a pool does. */
  const wakeOn = async (worker: Engine, runId: string) => {
    const [job, ...more] = await claim(worker, runId);
    expect(job, 'a due wake of the run').toBeDefined();
    expect(more).toEqual([]);
    const ack = ackOf(worker, job!);
    const outcome = await executeRun(worker.runtime, runId, ack, job!.loaded);
    if (!ack.done) await deleteJob(autocommitDb(worker.runtime), ack);
    return outcome;
  };
  const runRow = (runId: string) => db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
  const stepRows = async (runId: string) =>
    (await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } })).map((s) => ({
      sequence: s.sequence,
      name: s.name,
      status: s.status,
      attempts: s.attempts,
      updated_at: s.updated_at.getTime(),
    }));
  /** The run's wakes that were delivered (its signal wait's timeout wake, due in an hour, is not). */
  const jobsOf = (runId: string) =>
    db.prisma.job.findMany({ where: { run_id: runId, deliveries: { gt: 0 } }, orderBy: { id: 'asc' } });
  const stuckEvents = async (runId: string) =>
    (
      await db.prisma.flowEvent.findMany({
        where: { run_id: runId, type: { in: ['run.stuck', 'run.unstuck'] } },
        orderBy: { id: 'asc' },
      })
    ).map((e) => e.type);

  it('a version-2 run woken on version-1 code: nothing replays, the wake waits (later each time), a version-2 worker finishes it', async () => {
    const w2 = engine([v2]);
    const w1 = engine([v1]);
    const { runId } = await w2.startFlow(v2, null);
    expect(await wakeOn(w2, runId)).toBe('parked');
    await w2.signal(runId, 'go');
    const steps = await stepRows(runId);
    const before = await runRow(runId);

    expect(await wakeOn(w1, runId)).toBe('parked');
    const after = await runRow(runId);
    expect(after.stuck_reason).toBe(
      `no_worker_for_version: r38h-flow v2 (worker ${w1.runtime.workerId} has v1); its wake waits for a worker with that version`,
    );
    // Nothing else of the run changed, and no step row at all.
    expect({ status: after.status, waiting: after.waiting_for, started: after.started_at }).toEqual({
      status: before.status,
      waiting: before.waiting_for,
      started: before.started_at,
    });
    expect(await stepRows(runId)).toEqual(steps);
    expect(await stuckEvents(runId)).toEqual(['run.stuck']);
    // The wake stays, leased by nobody, due one poll interval (10 ms) later: not a delivery burnt.
    const [job] = await jobsOf(runId);
    expect(job).toMatchObject({ locked_by: null, locked_until: null, deliveries: 1 });
    expect(job!.available_at.getTime()).toBe(clock.now().getTime() + 10);
    expect(await claim(w1, runId)).toEqual([]);

    // Offered again, handed back again: twice the delay, the reason not written twice.
    clock.advance(10);
    expect(await wakeOn(w1, runId)).toBe('parked');
    const [again] = await jobsOf(runId);
    expect(again).toMatchObject({ locked_by: null, deliveries: 2 });
    expect(again!.available_at.getTime()).toBe(clock.now().getTime() + 20);
    expect((await runRow(runId)).version).toBe(after.version);
    expect(await stuckEvents(runId)).toEqual(['run.stuck']);
    expect(await stepRows(runId)).toEqual(steps);

    // A version-2 worker takes the wake when it is due and finishes the run on version 2's code.
    clock.advance(20);
    expect(await wakeOn(w2, runId)).toBe('finished');
    const done = await runRow(runId);
    expect({ status: done.status, output: done.output, stuck: done.stuck_reason }).toEqual({
      status: 'Completed',
      output: { code: 2 },
      stuck: null,
    });
    expect((await stepRows(runId)).map((s) => s.name)).toEqual(['r38h-a', 'go', 'r38h-c']);
    expect(await stuckEvents(runId)).toEqual(['run.stuck', 'run.unstuck']);
    expect(await jobsOf(runId)).toEqual([]);
  });

  it('a run of a flow the worker does not have: its start stays queued and the run says why; a worker with the flow runs it', async () => {
    const starter = engine([v2]);
    const other = engine([elsewhere]);
    const { runId } = await starter.startFlow(v2, null);
    expect(await wakeOn(other, runId)).toBe('parked');
    const row = await runRow(runId);
    expect({ status: row.status, started: row.started_at }).toEqual({ status: 'Waiting', started: null });
    expect(row.stuck_reason).toMatch(/^unknown_flow: no flow named "r38h-flow" is registered on this worker/);
    expect(await jobsOf(runId)).toMatchObject([{ locked_by: null, deliveries: 1 }]);
    clock.advance(10);
    expect(await wakeOn(starter, runId)).toBe('parked');
    expect(await runRow(runId)).toMatchObject({ status: 'Waiting', stuck_reason: null });
    expect((await runRow(runId)).waiting_for).toMatch(/^signal/);
  });

  it('review 38 lead: the hand-back writes no reason over a run a worker with its code is replaying, whose park then lands', async () => {
    const w2 = engine([slowV2]);
    const w1 = engine([slowV1]);
    const { runId } = await w2.startFlow(slowV2, null);
    held = gate();
    const inside = new Promise<void>((r) => (entered = r));
    const replay = wakeOn(w2, runId);
    try {
      // Progress: the version-2 replay is inside its step; the run is marked active (Running).
      await inside;
      expect((await runRow(runId)).status).toBe('Running');
      await db.prisma.job.create({ data: { kind: 'wake-run', run_id: runId, available_at: clock.now() } });
      expect(await wakeOn(w1, runId)).toBe('parked');
      expect(await runRow(runId)).toMatchObject({ status: 'Running', stuck_reason: null });
    } finally {
      held.open();
    }
    expect(await replay).toBe('parked');
    const parked = await runRow(runId);
    expect({ status: parked.status, stuck: parked.stuck_reason }).toEqual({ status: 'Waiting', stuck: null });
    expect(parked.waiting_for).toMatch(/^signal/);
    expect(await stuckEvents(runId)).toEqual([]);
    // The handed-back wake, taken by the right worker later, finds the run parked on its signal.
    clock.advance(10);
    expect(await wakeOn(w2, runId)).toBe('parked');
    expect(await runRow(runId)).toMatchObject({ status: 'Waiting', stuck_reason: null });
  });

  it('the doctor re-wakes a run stuck for want of its flow whose wake is gone (one an engine before ADR 0112 parked), past the grace', async () => {
    const w2 = engine([v2]);
    const { runId } = await w2.startFlow(v2, null);
    // As a worker without the flow left it before ADR 0112: stuck, its wake acknowledged.
    await db.prisma.job.deleteMany({ where: { run_id: runId } });
    await db.prisma.flowRun.update({
      where: { id: runId },
      data: {
        status: 'Waiting',
        stuck_reason: 'unknown_flow: no flow named "r38h-flow" is registered on this worker',
        updated_at: clock.now(),
      },
    });
    // A run blocked for another reason is not this rule's.
    const blocked = await w2.startFlow(v2, null);
    await db.prisma.job.deleteMany({ where: { run_id: blocked.runId } });
    await db.prisma.flowRun.update({
      where: { id: blocked.runId },
      data: { status: 'Waiting', stuck_reason: 'replay_blocked: step 1 ...', updated_at: clock.now() },
    });
    expect((await w2.sweepDoctor()).redispatched).toEqual([]);
    clock.advance(61_000);
    expect((await w2.sweepDoctor()).redispatched).toEqual([{ runId, rule: 'R2' }]);
    expect(await wakeOn(w2, runId)).toBe('parked');
    expect(await runRow(runId)).toMatchObject({ status: 'Waiting', stuck_reason: null });
    expect(await jobsOf(blocked.runId)).toEqual([]);
  });
});
