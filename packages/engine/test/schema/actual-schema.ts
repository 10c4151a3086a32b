import type { SqlSession } from '../../src/db/database.ts';
import type { SchemaShape } from './database-schema.ts';

/** Reads the `sagaflow` schema back from the catalog, in the same shape as the expectation. */
export async function actualSchema(sql: SqlSession): Promise<SchemaShape> {
  const columns = await sql.query<{
    table_name: string;
    column_name: string;
    type: string;
    is_nullable: string;
    column_default: string | null;
  }>(`
    select c.table_name, c.column_name, c.is_nullable, c.column_default,
           format_type(a.atttypid, a.atttypmod) as type
      from information_schema.columns c
      join pg_attribute a on a.attrelid = ('"' || c.table_schema || '"."' || c.table_name || '"')::regclass
                         and a.attname = c.column_name
     where c.table_schema = 'sagaflow' and c.table_name <> '_prisma_migrations'
     order by c.table_name, c.ordinal_position`);
  const indexes = await sql.query<{
    name: string;
    table: string;
    unique: boolean;
    primary: boolean;
    columns: string[];
    predicate: string | null;
  }>(`
    select i.relname as name, t.relname as table, ix.indisunique as unique, ix.indisprimary as primary,
           pg_get_expr(ix.indpred, ix.indrelid) as predicate,
           array(select a.attname::text from unnest(ix.indkey) with ordinality k(attnum, ord)
                   join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum order by k.ord) as columns
      from pg_index ix
      join pg_class i on i.oid = ix.indexrelid
      join pg_class t on t.oid = ix.indrelid
      join pg_namespace n on n.oid = t.relnamespace
     where n.nspname = 'sagaflow' and t.relname <> '_prisma_migrations'`);
  const foreignKeys = await sql.query<{
    name: string;
    table: string;
    columns: string[];
    references: string;
    referenced_columns: string[];
    on_delete: string;
    on_update: string;
  }>(`
    select c.conname as name, t.relname as table, r.relname as references,
           c.confdeltype as on_delete, c.confupdtype as on_update,
           array(select a.attname::text from unnest(c.conkey) with ordinality k(attnum, ord)
                   join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum order by k.ord) as columns,
           array(select a.attname::text from unnest(c.confkey) with ordinality k(attnum, ord)
                   join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k.attnum order by k.ord)
             as referenced_columns
      from pg_constraint c
      join pg_class t on t.oid = c.conrelid
      join pg_class r on r.oid = c.confrelid
      join pg_namespace n on n.oid = t.relnamespace
     where c.contype = 'f' and n.nspname = 'sagaflow'`);
  const shape: SchemaShape = { tables: {}, indexes: {}, foreignKeys: {} };
  for (const k of foreignKeys)
    shape.foreignKeys[k.name] = {
      table: k.table,
      columns: k.columns,
      references: k.references,
      referencedColumns: k.referenced_columns,
      onDelete: referentialAction[k.on_delete] ?? `unknown:${k.on_delete}`,
      onUpdate: referentialAction[k.on_update] ?? `unknown:${k.on_update}`,
    };
  for (const c of columns) {
    const table = (shape.tables[c.table_name] ??= {});
    table[c.column_name] = {
      type: normaliseType(c.type),
      nullable: c.is_nullable === 'YES',
      default: unqualify(c.column_default),
    };
  }
  for (const i of indexes)
    shape.indexes[i.name] = {
      table: i.table,
      columns: i.columns,
      unique: i.unique,
      primary: i.primary,
      predicate: i.predicate,
    };
  return shape;
}

/** pg_constraint's one-letter referential actions, by Prisma's names for them. */
const referentialAction: Record<string, string> = {
  a: 'NoAction',
  r: 'Restrict',
  c: 'Cascade',
  n: 'SetNull',
  d: 'SetDefault',
};

/** format_type spells types the long way; bring them to the short names the expectation uses. */
function normaliseType(t: string): string {
  return t
    .replace(/^timestamp\((\d+)\) with time zone/, 'timestamptz($1)')
    .replace(/^timestamp\((\d+)\) without time zone/, 'timestamp($1)')
    .replace(/^character varying/, 'varchar');
}

/** A sequence default prints schema-qualified or not depending on search_path; compare unqualified. */
function unqualify(def: string | null): string | null {
  return def?.replace("nextval('sagaflow.", "nextval('") ?? null;
}
