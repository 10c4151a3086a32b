import pg from 'pg';
import { labelStatement, transactionControl } from './label-statement.ts';

/** Client-observed time of one kind of statement: from `client.query()` to its reply. */
export interface StatementTiming {
  calls: number;
  ms: number;
}

/** One transaction as the driver saw it: BEGIN sent to COMMIT (or ROLLBACK) answered. */
export interface TransactionTiming {
  /** The labels of the statements between BEGIN and COMMIT, in order, then COMMIT or ROLLBACK. */
  readonly labels: readonly string[];
  readonly ms: number;
  /** Time spent waiting for the statements' replies, BEGIN and COMMIT included. */
  readonly roundTripMs: number;
}

export interface PgQueryRecorder {
  /** Every statement, by label, inside transactions or not. */
  readonly statements: Map<string, StatementTiming>;
  /** Statements sent outside BEGIN … COMMIT (each its own implicit transaction), by label. */
  readonly autocommit: Map<string, StatementTiming>;
  readonly transactions: TransactionTiming[];
  reset(): void;
  uninstall(): void;
}

type QueryMethod = (this: pg.Client, ...args: unknown[]) => unknown;
interface OpenTransaction {
  startedAt: number;
  labels: string[];
  roundTripMs: number;
}

/**
 * Times every statement sent through `pg.Client#query` in this process, from the outside: the engine
 * builds its own pool, but under pnpm its `pg` and ours are one module instance, so wrapping the
 * prototype sees the engine's (and Prisma's) statements without touching engine code. Clients for
 * which `ignore` is true (the bench's own observer) are not recorded. The cost is two
 * `performance.now()` calls and a map update per statement.
 */
export function instrumentPgQueries(ignore: (client: pg.Client) => boolean): PgQueryRecorder {
  const proto = pg.Client.prototype as unknown as { query: QueryMethod };
  const original = proto.query;
  const open = new WeakMap<pg.Client, OpenTransaction>();
  const recorder: PgQueryRecorder = {
    statements: new Map(),
    autocommit: new Map(),
    transactions: [],
    reset() {
      recorder.statements.clear();
      recorder.autocommit.clear();
      recorder.transactions.length = 0;
    },
    uninstall() {
      proto.query = original;
    },
  };

  const record = (client: pg.Client, sql: string, startedAt: number) => {
    const endedAt = performance.now();
    const ms = endedAt - startedAt;
    const label = labelStatement(sql);
    add(recorder.statements, label, ms);
    const control = transactionControl(sql);
    const tx = open.get(client);
    if (control === 'begin') {
      open.set(client, { startedAt, labels: [], roundTripMs: ms });
    } else if (tx && (control === 'commit' || control === 'rollback')) {
      open.delete(client);
      const labels = [...tx.labels, control === 'commit' ? 'COMMIT' : 'ROLLBACK'];
      recorder.transactions.push({ labels, ms: endedAt - tx.startedAt, roundTripMs: tx.roundTripMs + ms });
    } else if (tx) {
      tx.labels.push(label);
      tx.roundTripMs += ms;
    } else {
      add(recorder.autocommit, label, ms);
    }
  };

  proto.query = function query(this: pg.Client, ...args: unknown[]): unknown {
    const first = args[0];
    const sql = typeof first === 'string' ? first : (first as { text?: unknown } | null)?.text;
    const submittable = typeof (first as { submit?: unknown } | null)?.submit === 'function';
    if (ignore(this) || typeof sql !== 'string') return original.apply(this, args);
    const startedAt = performance.now();
    if (submittable) {
      // A query object handed over whole (the engine's raw statements, a pg.Query of its own): it
      // reports its end to its own callback, called on success and on failure alike.
      const query = first as { callback?: unknown };
      if (typeof query.callback !== 'function') return original.apply(this, args);
      const callback = query.callback as (...cbArgs: unknown[]) => unknown;
      query.callback = (...cbArgs: unknown[]) => {
        record(this, sql, startedAt);
        return callback(...cbArgs);
      };
      return original.apply(this, args);
    }
    const last = args.at(-1);
    if (typeof last === 'function') {
      const callback = last as (...cbArgs: unknown[]) => unknown;
      args[args.length - 1] = (...cbArgs: unknown[]) => {
        record(this, sql, startedAt);
        return callback(...cbArgs);
      };
      return original.apply(this, args);
    }
    const result = original.apply(this, args);
    if (result instanceof Promise) {
      const done = () => record(this, sql, startedAt);
      void result.then(done, done);
    }
    return result;
  };
  return recorder;
}

function add(map: Map<string, StatementTiming>, label: string, ms: number): void {
  const entry = map.get(label) ?? { calls: 0, ms: 0 };
  entry.calls += 1;
  entry.ms += ms;
  map.set(label, entry);
}
