import type { Database } from '../../../src/db/database.ts';

/** Every engine table's rows, as sorted JSON: two snapshots are equal only if no row was added, removed or changed. */
export async function snapshotTables(db: Database): Promise<Record<string, string>> {
  const tables = await db.prisma.$queryRawUnsafe<{ name: string }[]>(
    `select table_name as name from information_schema.tables
      where table_schema = 'sagaflow' and table_type = 'BASE TABLE' and table_name <> '_prisma_migrations'
      order by table_name`,
  );
  const out: Record<string, string> = {};
  for (const { name } of tables) {
    const rows = await db.prisma.$queryRawUnsafe<{ rows: string }[]>(
      `select coalesce(json_agg(x order by x::text), '[]')::text as rows
         from (select to_jsonb(t) as x from "sagaflow"."${name}" t) s`,
    );
    out[name] = rows[0]?.rows ?? '[]';
  }
  return out;
}

/** The snapshot without one table (the audit table, when a refusal is expected to add its row). */
export function without(snapshot: Record<string, string>, table: string): Record<string, string> {
  const { [table]: _dropped, ...rest } = snapshot;
  return rest;
}

/** Rows of a table in `after` that were not in `before`. */
export function addedRows(before: Record<string, string>, after: Record<string, string>, table: string): unknown[] {
  const old = new Set((JSON.parse(before[table] ?? '[]') as unknown[]).map((r) => JSON.stringify(r)));
  return (JSON.parse(after[table] ?? '[]') as unknown[]).filter((r) => !old.has(JSON.stringify(r)));
}
