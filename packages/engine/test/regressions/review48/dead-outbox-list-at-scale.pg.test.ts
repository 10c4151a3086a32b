import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Prisma } from '../../../src/generated/prisma/client.ts';
import type { Database } from '../../../src/index.ts';
import { listDeadOutboxRows } from '../../../src/store/outbox/list-dead-outbox-rows.ts';
import { listSourceOutbox } from '../../../src/store/list-source-outbox.ts';
import type { Db } from '../../../src/store/types.ts';
import { openTestDatabase } from '../../support/test-database.ts';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** The rows each scan of the plan read: what it returned plus what its filter threw away. */
function scans(node: PlanNode, out: { node: string; read: number }[] = []) {
  if (/Scan/.test(node['Node Type'])) {
    const loops = node['Actual Loops'] ?? 1;
    out.push({
      node: `${node['Node Type']} ${node['Index Name'] ?? node['Relation Name'] ?? ''}`,
      read: ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)) * loops,
    });
  }
  for (const child of node.Plans ?? []) scans(child, out);
  return out;
}

/**
 * The store's own statement, EXPLAIN ANALYZEd with its own parameters: a Db whose $queryRaw prefixes the
 * product's SQL with EXPLAIN, so what is checked is exactly what the API (`outbox.dead`) sends.
 */
function explaining(db: Database, plans: PlanNode[]): Db {
  return {
    $queryRaw: async (strings: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) => {
      const sql = strings instanceof Prisma.Sql ? strings : Prisma.sql(strings, ...values);
      const explain = Prisma.sql(['explain (analyze, format json) ', ''], sql);
      const rows = await db.prisma.$queryRaw<{ 'QUERY PLAN': { Plan: PlanNode }[] }[]>(explain);
      plans.push(rows[0]!['QUERY PLAN'][0]!.Plan);
      return [];
    },
  } as unknown as Db;
}

/**
 * Review 48, attack 5: the console's and the CLI's lists of outbox rows with 100,000 rows in the table,
 * ANALYZEd. A page of the Dead list (`outbox.dead`, what `sagaflow requeue --dead --destination D` and the
 * console's "Dead outbox messages" draft against) must read about a page of rows, not the table.
 */
describe('review 48: the outbox lists at 100,000 rows (PostgreSQL plans)', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
    // An outage of the `billing` destination left 100,000 Dead rows over 2,000 instances; the `mail`
    // destination has 40 Dead rows, which died after them. Plus 20,000 Published rows.
    await db.prisma.$executeRaw`
      insert into "sagaflow"."outbox" (id, message_id, source_kind, source_id, type, destination, payload, status, attempts, available_at, last_error)
      select gen_random_uuid(), 'bill-' || n, 'process', 'inst-' || (n % 2000), 'Charge', 'billing', '{}'::jsonb, 'Dead', 10,
             now() - interval '2 hours' + n * interval '1 ms', 'webhook answered 503'
        from generate_series(1, 100000) n`;
    await db.prisma.$executeRaw`
      insert into "sagaflow"."outbox" (id, message_id, source_kind, source_id, type, destination, payload, status, attempts, available_at, last_error)
      select gen_random_uuid(), 'mail-' || n, 'process', 'inst-' || n, 'Mail', 'mail', '{}'::jsonb, 'Dead', 10,
             now() - interval '1 minute' + n * interval '1 ms', 'smtp relay refused'
        from generate_series(1, 40) n`;
    await db.prisma.$executeRaw`
      insert into "sagaflow"."outbox" (id, message_id, source_kind, source_id, type, destination, payload, status, published_at)
      select gen_random_uuid(), 'pub-' || n, 'process', 'inst-' || (n % 2000), 'Charge', 'billing', '{}'::jsonb, 'Published', now()
        from generate_series(1, 20000) n`;
    await db.prisma.$executeRawUnsafe('analyze "sagaflow"."outbox"');
  }, 300_000);
  afterAll(async () => {
    await db?.close();
  });

  it('a page of the Dead rows of one destination reads about a page, not every Dead row of the others', async () => {
    const plans: PlanNode[] = [];
    await listDeadOutboxRows(explaining(db, plans), { limit: 100, destination: 'mail' });
    const rows = await listDeadOutboxRows(db.prisma, { limit: 100, destination: 'mail' });
    expect(rows).toHaveLength(40);
    const read = scans(plans[0]!);
    const total = read.reduce((sum, s) => sum + s.read, 0);
    expect(read.map((s) => s.node).join(), JSON.stringify(read)).not.toMatch(/Seq Scan/);
    expect(total, JSON.stringify(read)).toBeLessThanOrEqual(1000);
  });

  it('a page of every Dead row reads through the (status, available_at) index and about a page of rows', async () => {
    const plans: PlanNode[] = [];
    await listDeadOutboxRows(explaining(db, plans), { limit: 500 });
    const read = scans(plans[0]!);
    expect(read.map((s) => s.node).join()).not.toMatch(/Seq Scan/);
    expect(
      read.reduce((sum, s) => sum + s.read, 0),
      JSON.stringify(read),
    ).toBeLessThanOrEqual(1000);
  });

  it("an instance's outbox rows are read through its source index, about a page", async () => {
    const plans: PlanNode[] = [];
    await listSourceOutbox(explaining(db, plans), 'inst-7', 100);
    const read = scans(plans[0]!);
    expect(read.map((s) => s.node).join()).not.toMatch(/Seq Scan/);
    expect(
      read.reduce((sum, s) => sum + s.read, 0),
      JSON.stringify(read),
    ).toBeLessThanOrEqual(1000);
  });
});
