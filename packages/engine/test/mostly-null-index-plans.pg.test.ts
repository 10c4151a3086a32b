import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.ts';
import { Prisma } from '../src/generated/prisma/client.ts';
import { prunableRunsWhere } from '../src/store/retention/prunable-sql.ts';
import { indexesIn } from './support/indexes-in-plan.ts';
import { openTestDatabase } from './support/test-database.ts';

const runs = 40_000;

/**
 * ADR 0052: the reads of the columns migration 0024 indexed partially (`WHERE col IS NOT NULL`)
 * still read those indexes, because each compares the column with a strict operator the planner
 * proves implies the predicate: a run's children (the child step, a cancellation's open children,
 * the run page), retention's oldest finished runs and their children, the oldest finish /metrics
 * reports. The console's own reads of these indexes (business key, stuck kind, the finished chart)
 * are held by bench/src/scale/console-query-plans.pg.test.ts. The SQL is the statements' own where
 * they are raw (retention's filter is imported); Prisma's are written as Prisma writes them.
 */
describe('the reads of a mostly-null column use its partial index on a seeded database (PostgreSQL)', () => {
  let db: Database;
  let parent: string;
  const plan = async (sql: Prisma.Sql) => {
    const rows = await db.prisma.$queryRaw<{ 'QUERY PLAN': unknown }[]>(Prisma.sql`explain (format json) ${sql}`);
    return indexesIn(rows[0]?.['QUERY PLAN']);
  };

  beforeAll(async () => {
    db = await openTestDatabase();
    // 40 k runs, one a minute, finished but the newest 2 %; 1 % are children of an earlier run,
    // 1 % carry a business key, a few of the open ones are stuck.
    await db.driver.exec(`
      insert into "sagaflow"."flow_runs" (id, flow_name, flow_version, status, input, business_key, stuck_reason,
                                          parent_run_id, parent_sequence, created_at, updated_at, finished_at)
      select ('00000000-0000-4000-8000-' || lpad(to_hex(n), 12, '0'))::uuid, 'seeded', 1,
             case when n > ${runs * 0.98} then 'Running' else 'Completed' end, '{}'::jsonb,
             case when n % 100 = 1 then 'order-' || n end,
             case when n % 100 = 2 and n > ${runs * 0.98} then 'owner_gone: seeded' end,
             case when n % 100 = 3 then ('00000000-0000-4000-8000-' || lpad(to_hex(n / 2), 12, '0'))::uuid end,
             case when n % 100 = 3 then 1 end,
             now() - make_interval(mins => ${runs} - n), now() - make_interval(mins => ${runs} - n),
             case when n <= ${runs * 0.98} then now() - make_interval(mins => ${runs} - n) end
        from generate_series(1, ${runs}) n;
      analyze "sagaflow"."flow_runs";`);
    const [row] = await db.driver.query<{ id: string }>(
      `select parent_run_id::text as id from "sagaflow"."flow_runs" where parent_run_id is not null limit 1`,
    );
    parent = row?.id ?? '';
  }, 120_000);
  afterAll(async () => {
    await db?.close();
  });

  it('a child step finds its child run, a cancellation its open children, the run page its children', async () => {
    const child = Prisma.sql`
      select id from "sagaflow"."flow_runs" where parent_run_id = ${parent}::uuid and parent_sequence = ${1}::int limit 1`;
    const openChildren = Prisma.sql`
      select id from "sagaflow"."flow_runs"
       where parent_run_id = ${parent}::uuid and parent_cancel_policy = ${'propagate'}
         and status in (${Prisma.join(['Pending', 'Running', 'Waiting', 'Compensating'])})`;
    const children = Prisma.sql`
      select id from "sagaflow"."flow_runs" where parent_run_id = ${parent}::uuid order by parent_sequence asc`;
    for (const sql of [child, openChildren, children])
      expect(await plan(sql)).toContain('flow_runs_parent_run_id_parent_sequence_idx');
  });

  it('retention picks the oldest finished runs by their finish and checks each for open children by index', async () => {
    const picked = await plan(Prisma.sql`
      select r.id::text as id from "sagaflow"."flow_runs" r
       where ${prunableRunsWhere(new Date(Date.now() - 10 * 24 * 3600 * 1000))}
       order by r.finished_at
       limit ${500}::int
       for update of r skip locked`);
    expect(picked).toContain('flow_runs_finished_at_status_idx');
    expect(picked).toContain('flow_runs_parent_run_id_parent_sequence_idx');
  });

  it("/metrics' oldest finished run reads the first entry of the finished runs' index", async () => {
    expect(await plan(Prisma.sql`select (select min(finished_at) from "sagaflow"."flow_runs") as runs`)).toContain(
      'flow_runs_finished_at_status_idx',
    );
  });

  it('a search by business key, with or without a flow, reads a business-key index', async () => {
    expect(await plan(Prisma.sql`select id from "sagaflow"."flow_runs" where business_key = ${'order-101'}`)).toContain(
      'flow_runs_business_key_idx',
    );
    expect(
      await plan(
        Prisma.sql`select id from "sagaflow"."flow_runs" where flow_name = ${'seeded'} and business_key = ${'order-101'}`,
      ),
    ).toEqual(expect.arrayContaining([expect.stringMatching(/^flow_runs_(flow_name_)?business_key_(idx|key)$/)]));
  });
});
