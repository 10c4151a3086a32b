import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepDoctor } from '../../src/api/sweep-doctor.ts';
import { sweepExpiredSteps } from '../../src/api/sweep-expired-steps.ts';
import type { Engine } from '../../src/create-engine.ts';
import type { Database } from '../../src/db/database.ts';
import { Prisma } from '../../src/generated/prisma/client.ts';
import { expireOverdueStepsSql } from '../../src/store/expire-overdue-steps.ts';
import { redispatchLostRunsSql } from '../../src/store/redispatch-lost-runs.ts';
import { firstRunId } from '../../src/store/repair-candidates-sql.ts';
import { seedLostRuns, seedOverdueSteps } from '../../src/testing/seed-sweep-backlog.ts';
import { TestClock } from '../../src/testing/test-clock.ts';
import { openTestDatabase } from '../support/test-database.ts';
import { bareEngine } from '../regressions/harness.ts';

/** Backlogs seeded by SQL on a real server: a sweep drains them exactly once, through its partial index. */
const noBudget = { sweeps: { pass_budget_ms: 600_000, batch_size: 1000 } };

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

async function plan(db: Database, statement: Prisma.Sql): Promise<PlanNode[]> {
  const rows = await db.prisma.$queryRaw<{ 'QUERY PLAN': { Plan: PlanNode }[] }[]>(
    Prisma.sql`explain (format json) ${statement}`,
  );
  const top = rows[0]?.['QUERY PLAN'][0]?.Plan;
  if (!top) throw new Error('no plan');
  return nodes(top);
}

const countOf = async (db: Database, sql: Prisma.Sql) =>
  (await db.prisma.$queryRaw<{ n: number }[]>(Prisma.sql`select count(*)::int as n from (${sql}) q`))[0]?.n;

describe('sweeps sized for a backlog (postgres)', () => {
  let db: Database;
  let clock: TestClock;
  let engine: Engine;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 10 });
    clock = new TestClock();
    engine = bareEngine(db, { flows: [], actions: [], clock, config: noBudget });
  });
  afterAll(async () => {
    await db.close();
  });

  it('the step sweep finds its candidates with an index scan on the partial index of open steps', async () => {
    const overdueAt = new Date(clock.now().getTime() - 60_000);
    await seedOverdueSteps(db, { flowName: 'sb-plan', overdue: 2000, finished: 20_000, overdueAt });
    await db.prisma.$executeRawUnsafe('analyze "sagaflow"."action_runs", "sagaflow"."flow_runs"');
    const steps = await plan(db, expireOverdueStepsSql({ table: 'action_runs', now: clock.now(), limit: 1000 }));
    expect(steps).toContainEqual(
      expect.objectContaining({ 'Node Type': 'Index Scan', 'Index Name': 'action_runs_open_expires_at_idx' }),
    );
    expect(steps.filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'action_runs')).toEqual([]);
    // This test leaves its backlog to the next one.
  });

  it('one sweep drains 20 k overdue steps: each expired once, one history row each, a wake per run; the rest untouched', async () => {
    const overdueAt = new Date(clock.now().getTime() - 60_000);
    const { notOverdueStepId } = await seedOverdueSteps(db, {
      flowName: 'sb-drain',
      overdue: 18_000,
      finished: 0,
      overdueAt,
    });
    const finishedBefore = await db.prisma.actionRun.count({ where: { status: 'Completed' } });

    const swept = await sweepExpiredSteps(engine.runtime);
    expect(swept).toEqual({ expired: 20_000, more: false });

    expect(await db.prisma.actionRun.count({ where: { status: 'Expired' } })).toBe(20_000);
    expect(await db.prisma.actionRun.count({ where: { status: 'Completed' } })).toBe(finishedBefore);
    expect(await db.prisma.actionRun.findUniqueOrThrow({ where: { id: notOverdueStepId } })).toMatchObject({
      status: 'Pending',
      finished_at: null,
    });
    const events = Prisma.sql`select row_id from "sagaflow"."flow_events" where type = 'action.expired'`;
    expect(await countOf(db, events)).toBe(20_000);
    expect(await countOf(db, Prisma.sql`select distinct row_id from (${events}) e`)).toBe(20_000);
    expect(await countOf(db, Prisma.sql`select distinct run_id from "sagaflow"."jobs" where kind = 'wake-run'`)).toBe(
      20_000,
    );
    expect(await sweepExpiredSteps(engine.runtime)).toEqual({ expired: 0, more: false });
    expect(engine.sweepProgress.figures()).toContainEqual(
      expect.objectContaining({ sweep: 'expired_steps', rowsTotal: 20_000, rowsLeft: 0 }),
    );
  });

  it('two sweepers racing over one backlog expire each step exactly once', async () => {
    const overdueAt = new Date(clock.now().getTime() - 60_000);
    await seedOverdueSteps(db, { flowName: 'sb-race', overdue: 4000, finished: 0, overdueAt });
    const rival = bareEngine(db, { flows: [], actions: [], clock, config: noBudget });
    const [a, b] = await Promise.all([
      sweepExpiredSteps(engine.runtime, { pageSize: 250 }),
      sweepExpiredSteps(rival.runtime, { pageSize: 250 }),
    ]);
    expect(a.expired + b.expired).toBe(4000);
    const twice = Prisma.sql`
      select row_id from "sagaflow"."flow_events" where type = 'action.expired' group by row_id having count(*) > 1`;
    expect(await countOf(db, twice)).toBe(0);
    expect(await db.prisma.actionRun.count({ where: { status: 'Expired' } })).toBe(24_000);
  });

  it('a pass stopped before the backlog is drained reports the rows left, and the next pass goes on from there', async () => {
    const overdueAt = new Date(clock.now().getTime() - 60_000);
    await seedOverdueSteps(db, { flowName: 'sb-stop', overdue: 2000, finished: 0, overdueAt });
    expect(await sweepExpiredSteps(engine.runtime, { pageSize: 500, maxPages: 1 })).toEqual({
      expired: 500,
      more: true,
    });
    expect(engine.sweepProgress.figures()).toContainEqual(
      expect.objectContaining({ sweep: 'expired_steps', rowsLeft: 1500 }),
    );
    expect(await sweepExpiredSteps(engine.runtime, { pageSize: 500 })).toEqual({ expired: 1500, more: false });
  });

  it("one doctor pass re-dispatches 6 k lost runs once each, through the rules' partial indexes", async () => {
    await seedLostRuns(db, { flowName: 'sb-lost', lost: 6000, createdAt: new Date(clock.now().getTime() - 3_600_000) });
    await db.prisma.$executeRawUnsafe('analyze "sagaflow"."action_runs", "sagaflow"."flow_runs", "sagaflow"."jobs"');
    const doctor = await plan(
      db,
      redispatchLostRunsSql({
        now: clock.now(),
        graceSeconds: 60,
        staleRunning: true,
        after: firstRunId,
        limit: 1000,
        budget: 5,
      }),
    );
    // Which index serves a rule is the planner's to weigh at this size (a few thousand rows); that no
    // branch reads a whole table, and the due timers come from their partial index, is the guarantee.
    expect(doctor.map((n) => n['Index Name'])).toContain('action_runs_waiting_run_id_wake_at_idx');
    expect(doctor.filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] !== 'jobs')).toEqual([]);

    const lost = Prisma.sql`select id from "sagaflow"."flow_runs" where flow_name = 'sb-lost'`;
    const pass = await sweepDoctor(engine.runtime);
    expect(pass.more).toBe(false);
    expect(pass.redispatched).toHaveLength(6000);
    expect(new Set(pass.redispatched.map((r) => r.rule))).toEqual(new Set(['R1', 'R2']));
    expect(await countOf(db, Prisma.sql`select run_id from "sagaflow"."jobs" where run_id in (${lost})`)).toBe(6000);
    const events = Prisma.sql`select run_id from "sagaflow"."flow_events" where type = 'doctor.redispatched' and run_id in (${lost})`;
    expect(await countOf(db, events)).toBe(6000);
    expect(await countOf(db, Prisma.sql`select distinct run_id from (${events}) e`)).toBe(6000);
    // Each now has its wake queued: the next pass finds nothing to do.
    expect((await sweepDoctor(engine.runtime)).redispatched).toEqual([]);
  });
});
