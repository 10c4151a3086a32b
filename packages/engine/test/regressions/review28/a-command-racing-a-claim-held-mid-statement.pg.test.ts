import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { autocommitDb } from '../../../src/db/autocommit-db.ts';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { claimJobs, type DbJob } from '../../../src/store/claim-jobs.ts';
import { deleteJob, type JobAck } from '../../../src/store/delete-job.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { stepHistory } from '../../support/step-history.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine } from '../harness.ts';
import { assertRunGuarantees, drain } from './support/invariants.ts';
import { actions, effectsOf, otherFlow, twoSteps } from './support/flows.ts';

/**
 * Attack 1, during the claim, on a real server. The claim is held INSIDE its one statement by a
 * test-only trigger that waits on an advisory lock the test holds (progress: the claim's backend is
 * seen waiting in pg_locks):
 *  - at its lease of the job (the statement's snapshot already taken, the run not locked yet): a
 *    command that commits then is newer than the claim's snapshot, and the run's lock must re-read it;
 *  - at its run.running insert (the run already locked and marked by the claim): the command waits
 *    for the claim's commit, then acts on a Running run whose replay starts from the claim's row.
 * The trigger only fires for the test's own claimer id, so nothing else is held.
 */
const flows = [twoSteps, otherFlow];
const names = flows.map((f) => f.name);
const HELD = 'r28-held-claimer';
const KEY = 282828;

describe('an operator command racing a claim held mid-statement (PostgreSQL)', () => {
  let db: Database & { url?: string };
  let holder: pg.Client;
  const clock = new TestClock();
  beforeAll(async () => {
    db = await openTestDatabase();
    holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    await holder.query(`
      create or replace function "sagaflow".r28_hold() returns trigger language plpgsql as $$
      begin perform pg_advisory_xact_lock_shared(${KEY}); return new; end $$`);
    await holder.query(`
      create trigger r28_hold_lease before update on "sagaflow"."jobs" for each row
        when (new.locked_by = '${HELD}-lease') execute function "sagaflow".r28_hold()`);
    await holder.query(`
      create or replace function "sagaflow".r28_hold_event() returns trigger language plpgsql as $$
      begin
        if exists (select 1 from "sagaflow"."jobs" where run_id = new.run_id and locked_by = '${HELD}-event') then
          perform pg_advisory_xact_lock_shared(${KEY});
        end if;
        return new;
      end $$`);
    await holder.query(`
      create trigger r28_hold_event before insert on "sagaflow"."flow_events" for each row
        when (new.type = 'run.running') execute function "sagaflow".r28_hold_event()`);
  });
  afterAll(async () => {
    await holder.query(`drop trigger if exists r28_hold_lease on "sagaflow"."jobs"`).catch(() => undefined);
    await holder.query(`drop trigger if exists r28_hold_event on "sagaflow"."flow_events"`).catch(() => undefined);
    await holder.end();
    await db.close();
  });

  const engine = () => bareEngine(db, { flows, actions, clock });
  const heldClaim = (worker: ReturnType<typeof engine>, at: 'lease' | 'event') =>
    claimJobs(autocommitDb(worker.runtime), {
      workerId: `${HELD}-${at}`,
      limit: 10,
      leaseSeconds: 60,
      now: clock.now(),
      flows: names,
    });
  const waitingOnTheKey = () =>
    waitFor('the claim to wait on the advisory lock', async () => {
      const rows = await db.prisma.$queryRaw<{ n: number }[]>`
        select count(*)::int as n from pg_locks where locktype = 'advisory' and objid = ${KEY}::oid and not granted`;
      return (rows[0]?.n ?? 0) > 0 ? true : undefined;
    });
  const waitingOnARow = (marker: string) =>
    waitFor(`a statement (${marker}) to wait for a lock`, async () => {
      const rows = await db.prisma.$queryRaw<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock' and query ilike ${`%${marker}%`}`;
      return (rows[0]?.n ?? 0) > 0 ? true : undefined;
    });
  const replay = async (worker: ReturnType<typeof engine>, job: DbJob, at: 'lease' | 'event') => {
    const ack: JobAck = { id: job.id, workerId: `${HELD}-${at}`, done: false };
    const outcome = await executeRun(worker.runtime, job.run_id!, ack, job.loaded);
    if (!ack.done) await deleteJob(autocommitDb(worker.runtime), ack);
    return outcome;
  };
  const finish = async (runId: string, tag: string, expected: string, cleanupMs = 0) => {
    const worker = engine();
    await drain(worker, clock, names);
    if (cleanupMs) clock.advance(cleanupMs);
    await drain(worker, clock, names);
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(run.status, (await stepHistory(db, runId)).join(', ')).toBe(expected);
    expect([...effectsOf(tag).entries()], 'actions ran after the command committed').toEqual([]);
    await assertRunGuarantees(db, runId, { effects: effectsOf(tag), expectTerminal: true });
  };

  for (const command of ['terminate', 'cancel'] as const) {
    it(`${command} commits while the claim, its snapshot taken, leases the job: the claim must not mark from its snapshot`, async () => {
      await db.prisma.job.deleteMany({});
      const tag = `held-lease-${command}`;
      const s = engine();
      const { runId } = await s.startFlow(twoSteps, tag);
      await holder.query('begin');
      await holder.query('select pg_advisory_xact_lock($1)', [KEY]);
      const worker = engine();
      const claiming = heldClaim(worker, 'lease');
      try {
        await waitingOnTheKey();
        if (command === 'terminate') expect((await s.terminate(runId, { reason: 'during' })).terminated).toBe(true);
        else expect((await s.cancel(runId, { reason: 'during', cleanupSeconds: 60 })).requested).toBe(true);
      } finally {
        await holder.query('commit');
      }
      const jobs = await claiming;
      const mine = jobs.filter((j) => j.run_id === runId);
      expect(mine.length).toBeGreaterThan(0);
      if (command === 'terminate') expect(mine.filter((j) => j.loaded)).toEqual([]);
      // A row the claim handed over must be the run as it is after the command (the load's row would be).
      for (const j of mine.filter((j) => j.loaded)) expect(j.loaded!.run.cancel_requested_at).not.toBeNull();
      for (const j of jobs) await replay(worker, j, 'lease');
      await finish(runId, tag, command === 'terminate' ? 'Terminated' : 'Cancelled', 61_000);
    });

    it(`${command} waits for the claim that locked and marked the run, then commits before the replay`, async () => {
      await db.prisma.job.deleteMany({});
      const tag = `held-event-${command}`;
      const s = engine();
      const { runId } = await s.startFlow(twoSteps, tag);
      await holder.query('begin');
      await holder.query('select pg_advisory_xact_lock($1)', [KEY]);
      const worker = engine();
      const claiming = heldClaim(worker, 'event');
      let commanding: Promise<unknown>;
      try {
        await waitingOnTheKey();
        commanding =
          command === 'terminate'
            ? s.terminate(runId, { reason: 'during' })
            : s.cancel(runId, { reason: 'during', cleanupSeconds: 60 });
        await waitingOnARow(command === 'terminate' ? 'for update of r' : 'cancel_requested_at =');
      } finally {
        await holder.query('commit');
      }
      const jobs = await claiming;
      await commanding!;
      expect(jobs.filter((j) => j.run_id === runId && j.loaded)).toHaveLength(1);
      for (const j of jobs) await replay(worker, j, 'event');
      await finish(runId, tag, command === 'terminate' ? 'Terminated' : 'Cancelled', 61_000);
    });
  }
});
