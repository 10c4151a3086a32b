import { expect } from 'vitest';
import { autocommitDb } from '../../../../src/db/autocommit-db.ts';
import type { Database } from '../../../../src/db/database.ts';
import type { Engine } from '../../../../src/create-engine.ts';
import { executeRun } from '../../../../src/runtime/execute-run.ts';
import { claimJobs, type DbJob } from '../../../../src/store/claim-jobs.ts';
import { deleteJob, type JobAck } from '../../../../src/store/delete-job.ts';
import type { TestClock } from '../../../../src/testing/test-clock.ts';
import { stepHistory } from '../../../support/step-history.ts';

export const terminalEvent = /^run\.(completed|failed|cancelled|terminated|expired|compensated|timed_?out)$/;
const terminalStatuses = ['Completed', 'Failed', 'Cancelled', 'Terminated', 'Expired', 'Compensated', 'TimedOut'];

/** Claims as a pool does (its flows), through the worker's own autocommitted statements. */
export function claimFor(worker: Engine, clock: TestClock, flows: readonly string[], limit = 10): Promise<DbJob[]> {
  return claimJobs(autocommitDb(worker.runtime), {
    workerId: worker.runtime.workerId,
    limit,
    leaseSeconds: 60,
    now: clock.now(),
    flows,
  });
}

export const ackOf = (worker: Engine, job: DbJob): JobAck => ({
  id: job.id,
  workerId: worker.runtime.workerId,
  done: false,
});

/** Runs one claimed job as the pool's handle does (first try with the claim's row; the wake deleted if not acked). */
export async function runJob(worker: Engine, job: DbJob, loaded = job.loaded) {
  const ack = ackOf(worker, job);
  const outcome = await executeRun(worker.runtime, job.run_id!, ack, loaded);
  if (!ack.done) await deleteJob(autocommitDb(worker.runtime), ack);
  return outcome;
}

/** Claims and runs every wake due now (several rounds), as a pool would, until none is due. */
export async function drain(worker: Engine, clock: TestClock, flows: readonly string[], rounds = 10) {
  for (let i = 0; i < rounds; i++) {
    const jobs = await claimFor(worker, clock, flows);
    if (jobs.length === 0) return;
    for (const job of jobs) await runJob(worker, job);
  }
}

/**
 * The guarantees of the brief for one run: one terminal event, nothing after it but refusals; at
 * most `maxRunning` run.running; each step's outcome once; each action's side effect once per
 * recorded attempt (`effects`: the side effects seen, by step sequence); an open run has a due wake
 * or a stuck reason.
 */
export async function assertRunGuarantees(
  db: Database,
  runId: string,
  opts: { effects?: Map<number, number>; maxRunning?: number; expectTerminal?: boolean } = {},
): Promise<string[]> {
  const history = await stepHistory(db, runId);
  const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
  const ends = history.filter((t) => terminalEvent.test(t));
  const why = `${run.status}: ${history.join(', ')}`;
  if (terminalStatuses.includes(run.status) || opts.expectTerminal) {
    expect(terminalStatuses, why).toContain(run.status);
    expect(ends, why).toHaveLength(1);
    const after = history.slice(history.indexOf(ends[0]!) + 1).filter((t) => !t.includes('refused'));
    expect(after, `written after the end: ${why}`).toEqual([]);
  } else {
    expect(ends, why).toEqual([]);
    const wakes = await db.prisma.job.count({ where: { run_id: runId } });
    expect(wakes > 0 || run.stuck_reason !== null, `open run with neither wake nor stuck reason: ${why}`).toBe(true);
  }
  expect(history.filter((t) => t === 'run.running').length, why).toBeLessThanOrEqual(opts.maxRunning ?? 1);
  const outcomes = new Map<string, number>();
  for (const t of history) {
    const m = /^action\.(completed|failed|errored|expired|cancelled)#(\d+)$/.exec(t);
    if (m && m[1] !== 'failed') outcomes.set(m[2]!, (outcomes.get(m[2]!) ?? 0) + 1);
  }
  for (const [seq, n] of outcomes) expect(n, `step ${seq} has ${n} final outcomes: ${why}`).toBe(1);
  if (opts.effects) {
    const steps = await db.prisma.actionRun.findMany({ where: { run_id: runId, kind: 'action' } });
    for (const s of steps)
      expect(opts.effects.get(s.sequence) ?? 0, `step ${s.sequence} side effects vs attempts: ${why}`).toBe(s.attempts);
    for (const [seq, n] of opts.effects)
      if (!steps.some((s) => s.sequence === seq)) expect(n, `side effect of unrecorded step ${seq}: ${why}`).toBe(0);
  }
  return history;
}
