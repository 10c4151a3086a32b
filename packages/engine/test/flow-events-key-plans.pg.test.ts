import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.ts';
import { Prisma } from '../src/generated/prisma/client.ts';
import { lastStuckEvent } from '../src/store/record-stuck-change.ts';
import { indexesIn } from './support/indexes-in-plan.ts';
import { openTestDatabase } from './support/test-database.ts';

const runs = 20_000;
const eventsPerRun = 9;
const runId = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

/**
 * Each scan of flow_events in EXPLAIN's JSON plan: its node type and the index it reads (a bitmap
 * heap scan's, from the bitmap index scan under it), if any.
 */
function flowEventReads(plan: unknown): string[] {
  if (Array.isArray(plan)) return plan.flatMap(flowEventReads);
  if (plan === null || typeof plan !== 'object') return [];
  const node = plan as Record<string, unknown>;
  const type = typeof node['Node Type'] === 'string' ? node['Node Type'] : '';
  const own =
    node['Relation Name'] === 'flow_events' && type.endsWith('Scan') ? [`${type} ${indexesIn(node).join(',')}`] : [];
  return [...own, ...Object.values(node).flatMap(flowEventReads)];
}

/**
 * ADR 0054: flow_events' key is (run_id, id) and the (run_id, id) index it duplicated is gone, so
 * every statement that reads the table must name its run. On 180 k events of 20 k runs, analyzed:
 * each of those the console plan test (bench/src/scale/console-query-plans.pg.test.ts: the run
 * page's event pages, the poll and its count) does not EXPLAIN reads flow_events through the key or
 * the stuck events' partial index, never a scan of the table. The SQL is the statements' own where
 * they are raw; Prisma's are written as Prisma writes them.
 */
describe("every read of flow_events goes through the run's key on a seeded database (PostgreSQL)", () => {
  let db: Database;
  const one = runId(runs / 2);
  const reads = async (sql: Prisma.Sql) => {
    const rows = await db.prisma.$queryRaw<{ 'QUERY PLAN': unknown }[]>(Prisma.sql`explain (format json) ${sql}`);
    return flowEventReads(rows[0]?.['QUERY PLAN']);
  };
  const throughKey = /^(Index|Index Only|Bitmap Heap) Scan flow_events_(pkey|run_stuck_idx)$/;

  beforeAll(async () => {
    db = await openTestDatabase();
    await db.driver.exec(`
      insert into "sagaflow"."flow_runs" (id, flow_name, flow_version, status, input, finished_at)
      select ('${runId(0).slice(0, 24)}' || lpad(to_hex(n), 12, '0'))::uuid, 'seeded', 1, 'Completed', '{}'::jsonb, now()
        from generate_series(1, ${runs}) n;
      insert into "sagaflow"."flow_events" (run_id, type, sequence, data)
      select ('${runId(0).slice(0, 24)}' || lpad(to_hex(n), 12, '0'))::uuid,
             case when e = 5 and n % 50 = 0 then 'run.stuck' else 'action.completed' end, e, '{}'::jsonb
        from generate_series(1, ${runs}) n, generate_series(1, ${eventsPerRun}) e
       order by n, e;
      analyze "sagaflow"."flow_runs";
      analyze "sagaflow"."flow_events";`);
  }, 120_000);
  afterAll(async () => {
    await db?.close();
  });

  it('the key is (run_id, id) and no other index on flow_events leads with run_id', async () => {
    const indexes = await db.driver.query<{ name: string; primary: boolean; def: string }>(
      `select c.relname as name, i.indisprimary as primary, pg_get_indexdef(i.indexrelid) as def
         from pg_index i join pg_class c on c.oid = i.indexrelid
        where i.indrelid = '"sagaflow"."flow_events"'::regclass order by 1`,
    );
    expect(indexes.map((i) => i.def.replace(/^.* USING /, ''))).toEqual([
      'btree (run_id, id)',
      "btree (run_id, id) WHERE (type = ANY (ARRAY['run.stuck'::text, 'run.unstuck'::text]))",
    ]);
    expect(indexes.map((i) => [i.name, i.primary])).toEqual([
      ['flow_events_pkey', true],
      ['flow_events_run_stuck_idx', false],
    ]);
  });

  it("the kick's read-back of its event, the control plane's whole history and retention's delete read the key", async () => {
    const [last] = await db.driver.query<{ id: string }>(
      `select max(id)::text as id from "sagaflow"."flow_events" where run_id = $1::uuid`,
      [one],
    );
    const kickReadBack = Prisma.sql`
      select count(*) from (select id from "sagaflow"."flow_events"
       where run_id = ${one}::uuid and id = ${BigInt(last!.id)}::bigint offset 0) sub`;
    const wholeHistory = Prisma.sql`
      select * from "sagaflow"."flow_events" where run_id = ${one}::uuid order by id asc`;
    const prune = Prisma.sql`
      delete from "sagaflow"."flow_events" where run_id = any(${[one, runId(7), runId(9)]}::uuid[])`;
    for (const sql of [kickReadBack, wholeHistory, prune]) {
      const how = await reads(sql);
      expect(how.length).toBeGreaterThan(0);
      for (const read of how) expect(read).toMatch(throughKey);
    }
  });

  it("a stuck episode's last event (the stuck change, the finish's run.unstuck) reads an index of the run's events", async () => {
    const how = await reads(Prisma.sql`select * from ${lastStuckEvent(one)} last`);
    expect(how).toHaveLength(1);
    expect(how[0]).toMatch(throughKey);
  });

  it('a read by id alone, without its run, would scan the table: the test can tell', async () => {
    expect(await reads(Prisma.sql`select count(*) from "sagaflow"."flow_events" where id = ${1n}::bigint`)).toEqual([
      expect.stringMatching(/^Seq Scan/),
    ]);
  });
});
