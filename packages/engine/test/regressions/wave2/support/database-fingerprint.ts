import type { Database } from '../../../../src/db/database.ts';

/**
 * Every row of every engine table, hashed per table: two equal fingerprints mean nothing was
 * inserted, updated or deleted in between (what "refused before any write" promises).
 */
export async function databaseFingerprint(db: Database): Promise<Record<string, string>> {
  const tables = await db.prisma.$queryRawUnsafe<{ table_name: string }[]>(
    `select table_name from information_schema.tables
      where table_schema = 'sagaflow' and table_type = 'BASE TABLE' order by table_name`,
  );
  const out: Record<string, string> = {};
  for (const { table_name } of tables) {
    const [row] = await db.prisma.$queryRawUnsafe<{ n: bigint; h: string | null }[]>(
      `select count(*) as n, md5(string_agg(t::text, '|' order by t::text)) as h from "sagaflow"."${table_name}" t`,
    );
    out[table_name] = `${String(row?.n ?? 0)}:${row?.h ?? ''}`;
  }
  return out;
}
