import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { autocommitDb } from '../src/db/autocommit-db.ts';
import type { Database } from '../src/db/database.ts';
import { defineAction, defineFlow } from '../src/index.ts';
import { executeRun } from '../src/runtime/execute-run.ts';
import { claimJobs, type DbJob } from '../src/store/claim-jobs.ts';
import { deleteJob, type JobAck } from '../src/store/delete-job.ts';
import { releaseJobs } from '../src/store/release-jobs.ts';
import { TestClock } from '../src/testing/test-clock.ts';
import { bareEngine } from './regressions/harness.ts';
import { countStatements } from './support/count-statements.ts';
import { completedStepsHistory, stepHistory } from './support/step-history.ts';
import { openTestDatabase, testDbKind } from './support/test-database.ts';

/**
 * ADR 0100: the claim of a run's wake marks a run that never ran (Pending) active in the same
 * statement, and its replay starts from the row the claim returned, with no load of its own. Runs
 * that are not Pending, of a flow the worker lacks, or past their run timeout are leased and left
 * to the load, as before.
 */
const noop = (name: string) => defineAction({ name, run: async () => ({ done: name }) });
const [one, two, three] = [noop('claimed-one'), noop('claimed-two'), noop('claimed-three')];
const threeSteps = defineFlow({
  name: 'claimed-three-steps',
  version: 1,
  run: async (ctx) => {
    await ctx.action(one, null);
    await ctx.action(two, null);
    return ctx.action(three, null);
  },
});
const waits = defineFlow({
  name: 'claimed-waits',
  version: 1,
  run: async (ctx) => {
    await ctx.awaitSignal('go', { timeoutSeconds: 3600 });
    return ctx.action(one, null);
  },
});
const flows = [threeSteps, waits];
const actions = [one, two, three];

describe(`a job's claim marks its Pending run active (${testDbKind()})`, () => {
  let db: Database;
  const clock = new TestClock();
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  /** An engine that starts runs and runs no pool: its starts queue a Pending run and its wake. */
  const starter = () => bareEngine(db, { flows, actions, clock });
  const claim = (worker: ReturnType<typeof bareEngine>, flowNames: string[]) =>
    claimJobs(autocommitDb(worker.runtime), {
      workerId: worker.runtime.workerId,
      limit: 10,
      leaseSeconds: 60,
      now: clock.now(),
      flows: flowNames,
    });
  const ackOf = (worker: ReturnType<typeof bareEngine>, job: DbJob): JobAck => ({
    id: job.id,
    workerId: worker.runtime.workerId,
    done: false,
  });
  const runRow = (runId: string) => db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });

  it('a run started where no pool runs: the claim marks it Running and the replay sends no load, only its 4 statements', async () => {
    const { runId } = await starter().startFlow(threeSteps, null);
    const pending = await runRow(runId);
    expect(pending.status).toBe('Pending');

    const counted = countStatements(db);
    const worker = bareEngine(counted.db, { flows, actions, clock });
    const [job, ...others] = await claim(worker, ['claimed-three-steps', 'claimed-waits']);
    expect(others).toEqual([]);
    expect(job!.run_id).toBe(runId);
    // The row as the load would have returned it (as it was before it was marked), and the version marked.
    expect(job!.loaded?.run.id).toBe(runId);
    expect(job!.loaded?.run.status).toBe('Pending');
    expect(job!.loaded?.run.created_at).toEqual(pending.created_at);
    expect(job!.loaded?.activeVersion).toBe(pending.version + 1);
    const marked = await runRow(runId);
    expect([marked.status, marked.version, marked.started_at]).toEqual(['Running', pending.version + 1, clock.now()]);
    expect(await stepHistory(db, runId)).toEqual(['run.started', 'run.running']);

    counted.sent.length = 0;
    const ack = ackOf(worker, job!);
    expect(await executeRun(worker.runtime, runId, ack, job!.loaded)).toBe('finished');
    const sent = counted.sent.map((s) => (s.inTransaction ? `tx: ${s.text.slice(0, 40)}` : s.text.slice(0, 40)));
    // No BEGIN, no load: a new step's transition for each step, the last one with the finish.
    expect(
      sent.filter((s) => s.startsWith('tx:') || s === 'BEGIN'),
      sent.join('\n'),
    ).toEqual([]);
    expect(counted.sent, sent.join('\n')).toHaveLength(4);
    expect(ack.done).toBe(true);
    const run = await runRow(runId);
    expect([run.status, run.output]).toEqual(['Completed', { done: 'claimed-three' }]);
    expect(await stepHistory(db, runId)).toEqual(completedStepsHistory(3));
    expect(await db.prisma.job.count({ where: { run_id: runId } })).toBe(0);
  });

  it('a run of a flow the worker lacks, or one that ran before, is leased but not marked: the load decides', async () => {
    const s = starter();
    const { runId: unknown } = await s.startFlow(threeSteps, null);
    const worker = bareEngine(db, { flows, actions, clock });
    // A worker with only the other flow leases the wake and leaves the run as it was.
    const [job] = await claim(worker, ['claimed-waits']);
    expect(job!.run_id).toBe(unknown);
    expect(job!.loaded).toBeUndefined();
    const untouched = await runRow(unknown);
    expect([untouched.status, untouched.started_at]).toEqual(['Pending', null]);
    await releaseJobs(autocommitDb(worker.runtime), { ids: [job!.id], workerId: worker.runtime.workerId });

    // A run that waits on a signal, then gets it: its wake is leased, not marked, and the load replays it.
    const { runId: waiting } = await s.startFlow(waits, null);
    const jobs = await claim(worker, ['claimed-three-steps', 'claimed-waits']);
    expect(jobs.map((j) => j.run_id).sort()).toEqual([unknown, waiting].sort());
    for (const j of jobs) {
      expect(j.loaded?.run.status).toBe('Pending');
      const ack = ackOf(worker, j);
      expect(await executeRun(worker.runtime, j.run_id!, ack, j.loaded)).not.toBe('not-open');
      // As the pool does: a replay that parked leaves its wake for the pool to delete.
      if (!ack.done) await deleteJob(autocommitDb(worker.runtime), ack);
    }
    expect((await runRow(waiting)).status).toBe('Waiting');
    await s.signal(waiting, 'go', null);
    const [wake] = await claim(worker, ['claimed-three-steps', 'claimed-waits']);
    expect(wake!.run_id).toBe(waiting);
    expect(wake!.loaded).toBeUndefined();
    expect(await executeRun(worker.runtime, waiting, ackOf(worker, wake!), wake!.loaded)).toBe('finished');
    expect((await runRow(waiting)).status).toBe('Completed');
    expect(await stepHistory(db, waiting)).toEqual([
      'run.started',
      'run.running',
      'signal.waiting#1',
      'signal.sent',
      'signal.received#1',
      'action.started#2',
      'action.completed#2',
      'run.completed',
    ]);
    expect((await runRow(unknown)).status).toBe('Completed');
    expect(await stepHistory(db, unknown)).toEqual(completedStepsHistory(3));
  });

  it('a marked run whose wake was given back is run by the next claim as any run that ran before: one outcome per step', async () => {
    const { runId } = await starter().startFlow(threeSteps, null);
    const first = bareEngine(db, { flows, actions, clock });
    const [job] = await claim(first, ['claimed-three-steps']);
    expect(job!.loaded?.run.id).toBe(runId);
    // The pool that claimed it stops before running it and gives the wake back.
    await releaseJobs(autocommitDb(first.runtime), { ids: [job!.id], workerId: first.runtime.workerId });

    const second = bareEngine(db, { flows, actions, clock });
    const [again] = await claim(second, ['claimed-three-steps']);
    expect(again!.run_id).toBe(runId);
    // Running already: not marked again by the claim; the load marks it, with no second run.running.
    expect(again!.loaded).toBeUndefined();
    expect(await executeRun(second.runtime, runId, ackOf(second, again!), again!.loaded)).toBe('finished');
    expect((await runRow(runId)).status).toBe('Completed');
    expect(await stepHistory(db, runId)).toEqual(completedStepsHistory(3));
    const steps = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    expect(steps.map((s) => [s.sequence, s.status, s.attempts, s.claimed_by])).toEqual(
      [1, 2, 3].map((n) => [n, 'Completed', 1, second.runtime.workerId]),
    );
  });

  it('a run past its run timeout is leased but not marked: the load times it out', async () => {
    const { runId } = await starter().startFlow(threeSteps, null, { runTimeoutSeconds: 30 });
    clock.advance(31_000);
    const worker = bareEngine(db, { flows, actions, clock });
    const jobs = await claim(worker, ['claimed-three-steps']);
    const job = jobs.find((j) => j.run_id === runId);
    expect(job).toBeDefined();
    expect(job!.loaded).toBeUndefined();
    expect((await runRow(runId)).status).toBe('Pending');
    expect(await executeRun(worker.runtime, runId, ackOf(worker, job!), job!.loaded)).toBe('finished');
    expect((await runRow(runId)).status).toBe('TimedOut');
    // The run timeout's own wake, leased with the start's, finds the run ended.
    for (const other of jobs.filter((j) => j !== job))
      expect(await executeRun(worker.runtime, other.run_id!, ackOf(worker, other), other.loaded)).toBe('not-open');
    await db.prisma.job.deleteMany({ where: { run_id: runId } });
  });
  it('two wakes of one Pending run leased together: the row goes with one, the other loads, and each step has one outcome', async () => {
    const { runId } = await starter().startFlow(threeSteps, null);
    // A second wake of the same run (a kick, a re-dispatch) queued before any pool took the first.
    await db.prisma.job.create({ data: { kind: 'wake-run', run_id: runId, available_at: clock.now() } });
    const worker = bareEngine(db, { flows, actions, clock });
    const jobs = await claim(worker, ['claimed-three-steps']);
    expect(jobs.map((j) => j.run_id)).toEqual([runId, runId]);
    expect(jobs.filter((j) => j.loaded !== undefined)).toHaveLength(1);
    // Both replays at once, then whatever wakes they left, until the run has ended.
    await Promise.all(
      jobs.map(async (j) => {
        const ack = ackOf(worker, j);
        await executeRun(worker.runtime, runId, ack, j.loaded);
        if (!ack.done) await deleteJob(autocommitDb(worker.runtime), ack);
      }),
    );
    for (let i = 0; i < 10 && (await runRow(runId)).status !== 'Completed'; i++)
      for (const j of await claim(worker, ['claimed-three-steps'])) {
        const ack = ackOf(worker, j);
        await executeRun(worker.runtime, runId, ack, j.loaded);
        if (!ack.done) await deleteJob(autocommitDb(worker.runtime), ack);
      }
    expect((await runRow(runId)).status).toBe('Completed');
    const history = await stepHistory(db, runId);
    for (const n of [1, 2, 3]) expect(history.filter((e) => e === `action.completed#${n}`)).toHaveLength(1);
    expect(history.filter((e) => e === 'run.running')).toHaveLength(1);
    expect(history.filter((e) => e === 'run.completed')).toHaveLength(1);
    expect(history.at(-1)).toBe('run.completed');
  });
});
