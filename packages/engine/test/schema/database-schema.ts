/** A database schema reduced to what drift checking compares. */
export interface ColumnShape {
  type: string;
  nullable: boolean;
  default: string | null;
}
export interface IndexShape {
  table: string;
  columns: string[];
  unique: boolean;
  primary: boolean;
  /** A partial index's predicate as PostgreSQL deparses it (pg_get_expr); null for a whole-table index. */
  predicate: string | null;
}
/** A foreign key: its columns, what they reference, and its referential actions (Prisma's names). */
export interface ForeignKeyShape {
  table: string;
  columns: string[];
  references: string;
  referencedColumns: string[];
  onDelete: string;
  onUpdate: string;
}
export interface SchemaShape {
  tables: Record<string, Record<string, ColumnShape>>;
  indexes: Record<string, IndexShape>;
  foreignKeys: Record<string, ForeignKeyShape>;
}

/** Every difference between what the schema file says and what the database has, one line each. */
export function diffSchemas(expected: SchemaShape, actual: SchemaShape): string[] {
  const out: string[] = [];
  for (const [table, cols] of Object.entries(expected.tables)) {
    const have = actual.tables[table];
    if (!have) {
      out.push(`table ${table}: missing in database`);
      continue;
    }
    for (const [col, shape] of Object.entries(cols)) {
      const got = have[col];
      if (!got) out.push(`column ${table}.${col}: missing in database`);
      else
        for (const key of ['type', 'nullable', 'default'] as const) {
          if (got[key] !== shape[key])
            out.push(
              `column ${table}.${col}: ${key} is ${String(got[key])} in database, ${String(shape[key])} in schema`,
            );
        }
    }
    for (const col of Object.keys(have)) if (!cols[col]) out.push(`column ${table}.${col}: in database, not in schema`);
  }
  for (const table of Object.keys(actual.tables))
    if (!expected.tables[table]) out.push(`table ${table}: in database, not in schema`);
  for (const [name, idx] of Object.entries(expected.indexes)) {
    const got = actual.indexes[name];
    if (!got) out.push(`index ${name}: missing in database`);
    else if (JSON.stringify(got) !== JSON.stringify(idx))
      out.push(`index ${name}: ${JSON.stringify(got)} in database, ${JSON.stringify(idx)} in schema`);
  }
  for (const name of Object.keys(actual.indexes))
    if (!expected.indexes[name]) out.push(`index ${name}: in database, not in schema`);
  for (const [name, fk] of Object.entries(expected.foreignKeys)) {
    const got = actual.foreignKeys[name];
    if (!got) out.push(`foreign key ${name}: missing in database`);
    else if (JSON.stringify(got) !== JSON.stringify(fk))
      out.push(`foreign key ${name}: ${JSON.stringify(got)} in database, ${JSON.stringify(fk)} in schema`);
  }
  for (const name of Object.keys(actual.foreignKeys))
    if (!expected.foreignKeys[name]) out.push(`foreign key ${name}: in database, not in schema`);
  return out;
}
