import pg from 'pg';
import type { RawResult } from './raw-db.ts';
import { rawTextParser } from './raw-values.ts';

/** A column as the server describes it (pg-protocol's RowDescription field, the part read here). */
export interface Column {
  name: string;
  dataTypeID: number;
}

/** How one statement's rows are read: its columns as described, their parsers, and a row with every column null. */
export interface RowShape {
  columns: readonly Column[];
  /** Each column's name, in order (read per value without going through its column). */
  names: string[];
  parsers: ((text: string) => unknown)[];
  empty: Record<string, null>;
  /** Two columns share a name: a NULL after a value must then still overwrite it. */
  duplicates: boolean;
}

/**
 * Row shapes by prepared statement name: a named statement describes the same columns every time it
 * runs (its text is fixed, and a change of its result's shape fails it as a stale plan and renames
 * it), so its parsers and its empty row are built once, not per statement as node-postgres does (its
 * `addFields` builds both from each description: 5-6 % of the engine's CPU at c=8). Bounded like
 * the names themselves, with room for renames.
 */
const shapes = new Map<string, RowShape>();
const maxShapes = 400;

function sameColumns(a: readonly Column[], b: readonly Column[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 1) {
    if (a[i]!.name !== b[i]!.name || a[i]!.dataTypeID !== b[i]!.dataTypeID) return false;
  }
  return true;
}

export function shapeOf(name: string | undefined, columns: Column[]): RowShape {
  const known = name === undefined ? undefined : shapes.get(name);
  if (known !== undefined && sameColumns(known.columns, columns)) return known;
  // Built as node-postgres builds it (a prototype-less object spread into a plain one): an object
  // given its columns one by one under computed names turns slow (dictionary mode), and every row
  // copied from it with it (6 times the time per row in a micro-benchmark of 24 columns).
  const columnsNull: Record<string, null> = Object.create(null) as Record<string, null>;
  for (const column of columns) columnsNull[column.name] = null;
  const names = columns.map((column) => column.name);
  const shape: RowShape = {
    columns,
    names,
    parsers: columns.map((column) => rawTextParser(column.dataTypeID)),
    empty: { ...columnsNull },
    duplicates: new Set(names).size !== names.length,
  };
  if (name !== undefined && (known !== undefined || shapes.size < maxShapes)) shapes.set(name, shape);
  return shape;
}

/** Remembers that `connection` has described the statement `name` as `shape`, so it is not described there again. */
export function rememberDescribed(
  connection: PgConnection | undefined,
  name: string | undefined,
  shape: RowShape,
): void {
  if (name === undefined || connection === undefined) return;
  let known = describedOn.get(connection);
  if (known === undefined) describedOn.set(connection, (known = new Map<string, RowShape>()));
  known.set(name, shape);
}

/**
 * One DataRow (its values as texts, null for SQL NULL) as an object of `shape`'s columns; throws when
 * the row does not fit the shape or a value does not parse (the caller reports it once the statement
 * completes, as node-postgres does with a row it could not parse).
 */
export function rowOf(shape: RowShape | undefined, fields: (string | null)[]): Record<string, unknown> {
  if (shape === undefined) throw new Error('the server sent a row before describing its columns');
  if (fields.length !== shape.names.length)
    throw new Error(`a row of ${fields.length} columns for a shape of ${shape.names.length}`);
  // The copy of the empty row already holds every NULL: only values are written (with no two columns
  // of one name), a third less time per row than writing every column (ADR 0049).
  const row: Record<string, unknown> = { ...shape.empty };
  const { names, parsers, duplicates } = shape;
  for (let i = 0; i < fields.length; i += 1) {
    const text = fields[i];
    if (text !== null && text !== undefined) row[names[i]!] = parsers[i]!(text);
    else if (duplicates) row[names[i]!] = null;
  }
  return row;
}

/** node-postgres's connection, the part that executes a statement already parsed on it (untyped in @types/pg). */
export interface PgConnection {
  bind(config: {
    portal: string;
    statement: string;
    values: unknown[];
    binary: boolean | undefined;
    valueMapper: (value: unknown) => unknown;
  }): void;
  execute(config: { portal: string; rows: undefined }): void;
  sync(): void;
}

/** node-postgres's own mapping of a parameter to its text, the one its `prepare` binds with (untyped in @types/pg). */
export const prepareValue = (pg as unknown as { utils: { prepareValue: (value: unknown) => unknown } }).utils
  .prepareValue;

/**
 * The row shape each connection described for each statement name (ADR 0053). A statement prepared
 * on a connection returns the same columns there for as long as it lives: the server refuses to run
 * it once its result would change shape ("cached plan must not change result type", after which it
 * is renamed). So from its second run on a connection it is sent without a Describe: the server then
 * sends no RowDescription, and neither pg nor this query reads one (per statement, a message of
 * ~30 bytes per column parsed field by field). Kept per connection, never per process: another
 * database, even of another schema version, describes its own columns on its own connections.
 */
export const describedOn = new WeakMap<PgConnection, Map<string, RowShape>>();

/**
 * One raw statement (ADR 0039) as node-postgres's own query, but reading its rows through the row
 * shape of its prepared name (see {@link shapes}); a row comes out as node-postgres builds it (every
 * column in order, the last of two same-named columns winning), its values by `rawTextParser` (text
 * format: these statements never ask for binary results). Given a text and values rather than a
 * config object, which node-postgres would copy property by property first (`cloneQueryConfig`).
 * Submitted with `client.query(query)`; its outcome is `result`.
 */
export class RawQuery extends pg.Query {
  /** node-postgres's own field (a named statement is prepared once per connection under it); untyped in @types/pg. */
  declare name: string | undefined;
  /** node-postgres's own fields and method, untyped in @types/pg: the parameters, and how a failure is reported. */
  declare values: unknown[];
  declare handleError: (err: Error, connection: PgConnection) => void;
  readonly result: Promise<RawResult>;
  private shape: RowShape | undefined;
  /** The rows read so far (not `rows`: node-postgres's query keeps its page size under that name). */
  private received!: unknown[];
  private parseError: unknown;
  /** The connection it was sent on, whose described shapes a RowDescription adds to. */
  private connection: PgConnection | undefined;

  constructor(name: string | undefined, text: string, values: unknown[]) {
    let settle: (err: Error | undefined, result: { rowCount: number | null } | undefined) => void = () => undefined;
    super(text, values, (err: Error | undefined, result: unknown) =>
      settle(err, result as { rowCount: number | null } | undefined),
    );
    this.name = name;
    this.received = [];
    // A failure's stack is taken again by its awaiter (`rawOn`), as node-postgres does, so that it leads
    // back to the statement's sender, not to the socket.
    this.result = new Promise<RawResult>((resolve, reject) => {
      settle = (err, result) => {
        const failure = err ?? (this.parseError as Error | undefined);
        if (failure !== undefined) reject(failure);
        else resolve({ rows: this.received, rowCount: result?.rowCount ?? 0 });
      };
    });
  }

  /**
   * Called by the client to send it: as node-postgres does (parse unless parsed on this connection,
   * bind, describe, execute, sync), but without the describe once this connection has described it
   * ({@link describedOn}).
   */
  prepare(connection: PgConnection): void {
    const described = this.name === undefined ? undefined : describedOn.get(connection)?.get(this.name);
    if (described === undefined) {
      this.connection = connection;
      (pg.Query.prototype as unknown as { prepare: (c: PgConnection) => void }).prepare.call(this, connection);
      return;
    }
    this.shape = described;
    const name = this.name!;
    try {
      connection.bind({ portal: '', statement: name, values: this.values, binary: false, valueMapper: prepareValue });
    } catch (err) {
      // Nothing was sent: the sync alone ends the exchange (its ReadyForQuery frees the client for the
      // next statement). Unlike node-postgres's path, the statement is not closed: it was prepared
      // before this run, and stays prepared for the next.
      connection.sync();
      this.handleError(err as Error, connection);
      return;
    }
    connection.execute({ portal: '', rows: undefined });
    connection.sync();
  }

  /** Called by the client with the statement's RowDescription (in place of node-postgres's `addFields`). */
  handleRowDescription(message: { fields: Column[] }): void {
    this.shape = shapeOf(this.name, message.fields);
    rememberDescribed(this.connection, this.name, this.shape);
  }

  /** Called by the client with each DataRow: its values as texts (null for SQL NULL). */
  handleDataRow(message: { fields: (string | null)[] }): void {
    if (this.parseError !== undefined) return;
    try {
      this.received.push(rowOf(this.shape, message.fields));
    } catch (err) {
      // Reported once the statement completes, as node-postgres does with a row it could not parse.
      this.parseError = err;
    }
  }
}
