import { readFileSync } from 'node:fs';
import { get_dmmf } from '@prisma/prisma-schema-wasm';
import type { ColumnShape, SchemaShape } from './database-schema.ts';

interface DmmfField {
  name: string;
  kind: string;
  type: string;
  isList: boolean;
  isRequired: boolean;
  isId: boolean;
  nativeType: [string, string[]] | null;
  default?: unknown;
  dbName?: string | null;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
  relationOnUpdate?: string;
  relationName?: string;
}
interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
}
interface DmmfIndex {
  model: string;
  type: 'id' | 'normal' | 'unique' | 'fulltext';
  dbName?: string | null;
  fields: { name: string }[];
}

const scalarType: Record<string, string> = {
  String: 'text',
  Int: 'integer',
  BigInt: 'bigint',
  Json: 'jsonb',
  DateTime: 'timestamp(3)',
  Boolean: 'boolean',
  Float: 'double precision',
};

function columnType(f: DmmfField): string {
  let base = scalarType[f.type] ?? `unknown:${f.type}`;
  if (f.nativeType) {
    const [name, args] = f.nativeType;
    if (name === 'Uuid') base = 'uuid';
    else if (name === 'Timestamptz') base = `timestamptz(${args[0] ?? 6})`;
    else if (name === 'VarChar') base = `varchar(${args[0] ?? ''})`;
    else base = `${name.toLowerCase()}(${args.join(',')})`;
  }
  return f.isList ? `${base}[]` : base;
}

function columnDefault(table: string, f: DmmfField): string | null {
  const d = f.default as { name?: string; args?: unknown[] } | string | number | boolean | unknown[] | undefined;
  if (d === undefined) return null;
  if (Array.isArray(d))
    return d.length === 0 ? `ARRAY[]::${columnType({ ...f, isList: false })}[]` : `unsupported list default`;
  if (typeof d === 'object' && d !== null) {
    if (d.name === 'now') return 'CURRENT_TIMESTAMP';
    if (d.name === 'autoincrement') return `nextval('${table}_${f.name}_seq'::regclass)`;
    if (d.name === 'dbgenerated') return String(d.args?.[0]);
    return `unsupported:${String(d.name)}`;
  }
  if (typeof d === 'string') return `'${d}'::${f.type === 'Json' ? 'jsonb' : 'text'}`;
  return String(d);
}

/** What schema.prisma says the `sagaflow` schema must contain, read through Prisma's own parser. */
export function expectedSchema(schemaPath: string): SchemaShape {
  const text = readFileSync(schemaPath, 'utf8');
  return expectedSchemaFromText(text);
}

export function expectedSchemaFromText(text: string): SchemaShape {
  const dmmf = JSON.parse(get_dmmf(JSON.stringify({ prismaSchema: [['schema.prisma', text]] }))) as {
    datamodel: { models: DmmfModel[]; indexes: DmmfIndex[] };
  };
  const shape: SchemaShape = { tables: {}, indexes: {}, foreignKeys: {} };
  const tableOf = new Map<string, string>();
  for (const m of dmmf.datamodel.models) {
    const table = m.dbName ?? m.name;
    tableOf.set(m.name, table);
    const cols: Record<string, ColumnShape> = {};
    for (const f of m.fields.filter((x) => x.kind !== 'object')) {
      cols[f.dbName ?? f.name] = {
        type: columnType(f),
        nullable: !f.isRequired && !f.isList,
        default: columnDefault(table, f),
      };
    }
    shape.tables[table] = cols;
  }
  for (const m of dmmf.datamodel.models) {
    const table = tableOf.get(m.name)!;
    for (const f of m.fields) {
      const from = f.relationFromFields ?? [];
      if (f.kind !== 'object' || from.length === 0) continue;
      // Prisma's defaults for a relation that names no action: Restrict on delete when it is required
      // (SetNull when optional), Cascade on update.
      shape.foreignKeys[`${table}_${from.join('_')}_fkey`] = {
        table,
        columns: from,
        references: tableOf.get(f.type) ?? f.type,
        referencedColumns: f.relationToFields ?? [],
        onDelete: f.relationOnDelete ?? (f.isRequired ? 'Restrict' : 'SetNull'),
        onUpdate: f.relationOnUpdate ?? 'Cascade',
      };
    }
  }
  const predicates = indexPredicates(text);
  for (const idx of dmmf.datamodel.indexes) {
    const table = tableOf.get(idx.model) ?? idx.model;
    const columns = idx.fields.map((f) => f.name);
    const name = idx.dbName ?? defaultIndexName(table, columns, idx.type);
    shape.indexes[name] = {
      table,
      columns,
      unique: idx.type !== 'normal',
      primary: idx.type === 'id',
      predicate: predicates.get(name) ?? null,
    };
  }
  return shape;
}

function defaultIndexName(table: string, columns: string[], type: DmmfIndex['type']): string {
  if (type === 'id') return `${table}_pkey`;
  return `${table}_${columns.join('_')}_${type === 'unique' ? 'key' : 'idx'}`;
}

/**
 * Each partial index's `where: raw("...")` text by index name, read from the schema text: Prisma's
 * DMMF leaves the predicate out, and without it a migration that builds a partial index whole (or
 * the reverse) would pass the drift check. The text is as written; `deparsePredicates` brings it to
 * PostgreSQL's own spelling before comparing.
 */
function indexPredicates(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const model of text.matchAll(/^model \w+ \{\n([\s\S]*?)^\}/gm)) {
    const body = model[1] ?? '';
    const table = /@@map\("([^"]+)"\)/.exec(body)?.[1];
    for (const line of body.matchAll(/^\s*@@(index|unique)\(\[([^\]]*)\](.*)\)\s*$/gm)) {
      const where = /where: raw\("([^"]*)"\)/.exec(line[3] ?? '')?.[1];
      if (!table || where === undefined) continue;
      const columns = (line[2] ?? '').split(',').map((c) => c.trim());
      const map = /map: "([^"]+)"/.exec(line[3] ?? '')?.[1];
      out.set(map ?? defaultIndexName(table, columns, line[1] === 'unique' ? 'unique' : 'normal'), where);
    }
  }
  return out;
}
