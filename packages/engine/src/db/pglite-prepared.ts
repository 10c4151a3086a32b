import { parse, protocol, type PGlite, type Transaction } from '@electric-sql/pglite';
import type { RawResult, RawStatement } from './raw-db.ts';
import { pgliteRawParsers, rawParameter } from './raw-values.ts';
import { isStalePlan } from './run-in-transaction.ts';
import { namedStatement, renameStatement, type NamedStatement } from './statement-names.ts';

/** What one PGlite instance keeps: its statements' parameter type oids by name, and its row parsers. */
interface PglitePrepared {
  readonly statements: Map<string, readonly number[]>;
  /**
   * PGlite's parsers with {@link pgliteRawParsers} over them, merged once: handed to PGlite as
   * per-query `parsers`, they were merged into a copy of its ~100 parsers on every statement
   * (a tenth of the process's busy samples at c = 1, ADR 0055).
   */
  readonly parsers: PGlite['parsers'];
}

const preparedOn = new WeakMap<PGlite, PglitePrepared>();

function preparedFor(pglite: PGlite): PglitePrepared {
  let prepared = preparedOn.get(pglite);
  if (prepared === undefined)
    preparedOn.set(pglite, (prepared = { statements: new Map(), parsers: { ...pglite.parsers, ...pgliteRawParsers } }));
  return prepared;
}

/**
 * One raw statement on PGlite, prepared by name the first time its text is sent and only bound and
 * executed after that, as node-postgres does on each PostgreSQL connection (ADR 0039, 0043). PGlite's
 * own `query` parses, analyzes and plans every statement it is given: for the hot path's set-based
 * statements (ADR 0045: a CTE over a dozen arrays) that was most of a flow's CPU, on a backend that
 * runs in this process (ADR 0055). A text without a name (too long, or past the process's bound) goes
 * through `target`'s `query` as before. Loaded with PGlite, never on PostgreSQL (ADR 0036: its RSS).
 *
 * It holds PGlite's locks as `query` does: on a transaction (`target` is one, and this is called
 * from within its callback) the statement lock alone, otherwise the transaction lock too, so it
 * never lands inside another caller's transaction. Values go out through PGlite's own serializers
 * for the parameter types the server described at preparation, and rows come back through its
 * parsers with {@link pgliteRawParsers}: what `query` would have sent and returned.
 */
export async function rawOnPglite(
  pglite: PGlite,
  target: PGlite | Transaction,
  statement: RawStatement,
): Promise<RawResult> {
  const values = statement.values.map(rawParameter);
  const named = namedStatement(statement.text);
  if (named === undefined) {
    const result = await target.query(statement.text, values, { parsers: preparedFor(pglite).parsers });
    return { rows: result.rows, rowCount: result.affectedRows ?? 0 };
  }
  const inTransaction = target !== pglite;
  const run = () => pglite._runExclusiveQuery(() => bindAndExecute(pglite, named, values, !inTransaction));
  try {
    return await (inTransaction ? run() : pglite._runExclusiveTransaction(run));
  } catch (err) {
    // Prepared before its result changed shape (a migration added a column): renamed, it is
    // prepared afresh, so the run's work is worth trying again, as on PostgreSQL.
    if (isStalePlan(err)) {
      renameStatement(named);
      Object.assign(err as Error, { retryable: true });
    }
    throw err;
  }
}

async function bindAndExecute(
  pglite: PGlite,
  named: NamedStatement,
  values: readonly unknown[],
  syncToFs: boolean,
): Promise<RawResult> {
  // Checked under the locks: close() takes and releases them before it tears the backend down, so a
  // statement queued behind it gets them while it closes (closed only once it is done).
  if (!pglite.ready) throw new Error(pglite.closed ? 'PGlite is closed' : 'PGlite is closing');
  const { name } = named;
  const prepared = preparedFor(pglite);
  let types = prepared.statements.get(name);
  if (types === undefined) {
    const { messages } = await pglite.execProtocol(
      concat([
        protocol.serialize.parse({ name, text: named.text }),
        protocol.serialize.describe({ type: 'S', name }),
        protocol.serialize.sync(),
      ]),
      { syncToFs: false },
    );
    types = parse.parseDescribeStatementResults(messages);
    prepared.statements.set(name, types);
  }
  const oids = types;
  const { messages } = await pglite.execProtocol(
    concat([
      protocol.serialize.bind({
        statement: name,
        values: values.map((value, i) => {
          if (value === null || value === undefined) return null;
          const serialize = pglite.serializers[oids[i] ?? 0];
          if (serialize) return serialize(value);
          // As PGlite's `query` does, a type without a serializer goes as the value's own text.
          return typeof value === 'object' ? JSON.stringify(value) : `${value as string | number | bigint | boolean}`;
        }),
      }),
      protocol.serialize.describe({ type: 'P' }),
      protocol.serialize.execute({}),
      protocol.serialize.sync(),
    ]),
    { syncToFs },
  );
  const [result] = parse.parseResults(messages, prepared.parsers);
  return { rows: result?.rows ?? [], rowCount: result?.affectedRows ?? 0 };
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
