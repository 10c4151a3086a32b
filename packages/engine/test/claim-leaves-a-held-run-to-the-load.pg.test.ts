import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { autocommitDb } from '../src/db/autocommit-db.ts';
import type { Database } from '../src/db/database.ts';
import { defineAction, defineFlow } from '../src/index.ts';
import { executeRun } from '../src/runtime/execute-run.ts';
import { claimJobs } from '../src/store/claim-jobs.ts';
import { TestClock } from '../src/testing/test-clock.ts';
import { bareEngine } from './regressions/harness.ts';
import { completedStepsHistory, stepHistory } from './support/step-history.ts';
import { openTestDatabase } from './support/test-database.ts';

const step = defineAction({ name: 'held-claim-step', run: async () => 'done' });
const flow = defineFlow({
  name: 'held-claim-flow',
  version: 1,
  run: async (ctx) => {
    await ctx.action(step, null);
    return ctx.action(step, null);
  },
});

/**
 * ADR 0100 on a real server: the claim that marks a Pending run active locks the run's row SKIP
 * LOCKED, so a run another transaction holds (a cancellation, a repair in progress) does not make
 * the claim wait, and is not marked: its wake is leased all the same, and the replay's load waits for
 * the holder, as before.
 */
describe('a job claim never waits for a run another transaction holds (PostgreSQL)', () => {
  let db: Database & { url?: string };
  const clock = new TestClock();
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('the held run is leased, left Pending and unmarked; released, its load runs it to the end', async () => {
    const { runId } = await bareEngine(db, { flows: [flow], actions: [step], clock }).startFlow(flow, null);
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select 1 from "sagaflow"."flow_runs" where id = $1 for update', [runId]);
      const worker = bareEngine(db, { flows: [flow], actions: [step], clock });
      // Answered while the holder still holds the row (a wait here would hang the test until its timeout).
      const [job, ...others] = await claimJobs(autocommitDb(worker.runtime), {
        workerId: worker.runtime.workerId,
        limit: 10,
        leaseSeconds: 60,
        now: clock.now(),
        flows: ['held-claim-flow'],
      });
      expect(others).toEqual([]);
      expect(job!.run_id).toBe(runId);
      expect(job!.loaded).toBeUndefined();
      const leased = await db.prisma.job.findUniqueOrThrow({ where: { id: job!.id } });
      expect(leased.locked_by).toBe(worker.runtime.workerId);
      await holder.query('rollback');
      expect((await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe('Pending');

      const ack = { id: job!.id, workerId: worker.runtime.workerId, done: false };
      expect(await executeRun(worker.runtime, runId, ack, job!.loaded)).toBe('finished');
      expect(ack.done).toBe(true);
      expect(await stepHistory(db, runId)).toEqual(completedStepsHistory(2));
    } finally {
      await holder.end();
    }
  });
});
