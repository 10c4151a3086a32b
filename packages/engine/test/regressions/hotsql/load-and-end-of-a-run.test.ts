import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { claimJobs } from '../../../src/store/claim-jobs.ts';
import type { JobAck } from '../../../src/store/delete-job.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { bareEngine } from '../harness.ts';

/**
 * Review of ADR 0037 decisions 1 and 2: the load that marks a run active in one statement (unless it is
 * overdue or of a flow this worker lacks), and the one statement after the finish that writes a stuck
 * episode's `run.unstuck`, the terminal event and deletes the finishing replay's job.
 */
const waits = defineFlow({
  name: 'hotsql-waits',
  version: 1,
  run: async (ctx) => {
    await ctx.awaitSignal('go', { timeoutSeconds: 3600 });
    return 'done';
  },
});
const quick = defineFlow({ name: 'hotsql-quick', version: 1, run: async () => 'done' });
/** Names a hand-made array literal would break: the load passes the registry's names as a text[]. */
const oddNames = ['a,b', 'x"y', '{z}', 'NULL', 'back\\slash', "it's", ' padded ', 'é"}{,\\'];
const odd = oddNames.map((name) => defineFlow({ name, version: 1, run: async () => name }));

describe(`a replay's one-statement load and one-statement end (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  const history = async (runId: string) =>
    (await db.prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } })).map((e) => ({
      type: e.type,
      data: e.data,
    }));

  it('a run of a flow this worker lacks is not marked active; once a worker has it, the end closes the stuck episode, then the terminal event, and deletes only its own job', async () => {
    const clock = new TestClock();
    const lacking = bareEngine(db, { flows: [waits], actions: [], clock });
    const having = bareEngine(db, { flows: [waits, quick], actions: [], clock });
    const { runId } = await having.startFlow(quick, null);
    expect(await executeRun(lacking.runtime, runId)).toBe('parked');
    const parked = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    // Parked as stuck (Waiting), never Running: no started_at, no run.running.
    expect({ status: parked.status, started: parked.started_at }).toEqual({ status: 'Waiting', started: null });
    expect(parked.stuck_reason).toMatch(/^unknown_flow: /);
    expect((await history(runId)).map((e) => e.type)).toEqual(['run.started', 'run.stuck']);

    // The worker that has the flow leases the run's wake and finishes it under that job.
    const jobs = await claimJobs(db.prisma, {
      workerId: having.runtime.workerId,
      limit: 10,
      leaseSeconds: 60,
      now: clock.now(),
    });
    const job = jobs.find((j) => j.run_id === runId);
    expect(job).toBeDefined();
    const other = await db.prisma.job.create({ data: { kind: 'wake-run', run_id: runId, available_at: clock.now() } });
    const ack: JobAck = { id: job!.id, workerId: having.runtime.workerId, done: false };
    expect(await executeRun(having.runtime, runId, ack)).toBe('finished');
    expect(ack.done).toBe(true);
    expect(await history(runId)).toEqual([
      { type: 'run.started', data: { flow: 'hotsql-quick', version: 1 } },
      { type: 'run.stuck', data: { reason: parked.stuck_reason } },
      { type: 'run.running', data: {} },
      { type: 'run.unstuck', data: { reason: parked.stuck_reason, by: 'run.completed' } },
      { type: 'run.completed', data: {} },
    ]);
    const left = await db.prisma.job.findMany({ where: { run_id: runId }, select: { id: true } });
    expect(left.map((j) => j.id)).toEqual([other.id]);
    // The wake that was left finds the run finished and changes nothing.
    expect(await executeRun(having.runtime, runId)).toBe('not-open');
    expect((await history(runId)).length).toBe(5);
  });

  it('a run past its run timeout is timed out without being marked active or getting run.running', async () => {
    const clock = new TestClock();
    const e = bareEngine(db, { flows: [quick], actions: [], clock });
    const { runId } = await e.startFlow(quick, null, { runTimeoutSeconds: 60 });
    clock.advance(60_000);
    expect(await executeRun(e.runtime, runId)).toBe('finished');
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect({ status: run.status, started: run.started_at }).toEqual({ status: 'TimedOut', started: null });
    expect((await history(runId)).map((h) => h.type)).toEqual(['run.started', 'run.timedout']);
  });

  it('a run whose cleanup window closed is cancelled without being marked active', async () => {
    const clock = new TestClock();
    const e = bareEngine(db, { flows: [waits], actions: [], clock });
    const { runId } = await e.startFlow(waits, null);
    expect(await executeRun(e.runtime, runId)).toBe('parked');
    await e.cancel(runId, { reason: 'review', cleanupSeconds: 10 });
    clock.advance(10_000);
    const before = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(await executeRun(e.runtime, runId)).toBe('finished');
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(run.status).toBe('Cancelled');
    expect(run.version).toBe(before.version + 1);
    const types = (await history(runId)).map((h) => h.type);
    expect(types.filter((t) => t === 'run.running')).toHaveLength(1);
    expect(types.at(-1)).toBe('run.cancelled');
  });

  it('run.running is written once, by the first replay, however many replays a run has', async () => {
    const e = bareEngine(db, { flows: [waits], actions: [] });
    const { runId } = await e.startFlow(waits, null);
    expect(await executeRun(e.runtime, runId)).toBe('parked');
    expect(await executeRun(e.runtime, runId)).toBe('parked');
    await e.signal(runId, 'go');
    expect(await executeRun(e.runtime, runId)).toBe('finished');
    const types = (await history(runId)).map((h) => h.type);
    expect(types.filter((t) => t === 'run.running')).toHaveLength(1);
    expect(types.at(-1)).toBe('run.completed');
  });

  it('flows whose names need quoting in an array literal are loaded and run', async () => {
    const e = bareEngine(db, { flows: odd, actions: [] });
    for (const flow of odd) {
      const { runId } = await e.startFlow(flow, null);
      expect(await executeRun(e.runtime, runId)).toBe('finished');
      const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      expect({ name: run.flow_name, status: run.status, output: run.output }).toEqual({
        name: flow.name,
        status: 'Completed',
        output: flow.name,
      });
    }
  });
});
