import type { Database } from '@sagaflow/engine';
import type { StatementKind, StatementTrace } from './summarise-round-trips.ts';

type Driver = Database['driver'];
type Statement = Parameters<Driver['statement']>[0];

/** The engine's hot statements, by the comment each leads with (ADRs 0045, 0047, 0048). */
const kindByComment: [string, StatementKind][] = [
  ['/* sagaflow: start with first step */', 'start'],
  ['/* sagaflow: starts */', 'start'],
  ['/* sagaflow: step transitions */', 'transition'],
  ['/* sagaflow: top-level run finishes */', 'finish'],
];

export interface RoundTripTracer {
  /** The handle to give the engine: `db` with its driver's statements timed. */
  readonly db: Database;
  /** Every statement sent through the traced driver since the last reset, in the order sent. */
  readonly statements: StatementTrace[];
  /** Transactions begun through the driver since the last reset (none on the hot path). */
  transactions: number;
  reset(): void;
}

/**
 * Times the statements the engine sends through `db`'s driver from outside the engine, which takes
 * its handle from the host (ARCHITECTURE): a copy of the handle whose `driver.statement` and `raw`
 * note when the engine sent each statement, which runs it carries (the hot statements' first
 * parameter is their runs' ids, ADR 0045), when the pool handed it a connection and when its answer
 * was back. The connection is seen by wrapping this pool's `connect`, which the driver calls
 * synchronously from `statement` (so the statement being sent at that moment is the one that waits).
 * The cost is a few `performance.now()` calls and one object per statement.
 */
export function traceRoundTrips(db: Database): RoundTripTracer {
  const pool = db.pool;
  if (pool === undefined) throw new Error('round trips are traced on PostgreSQL only (PGlite has no pool or wire)');
  /** The statements being sent at this moment: one, or a round's (ADR 0066), which share one connection. */
  let sending: StatementTrace[] | null = null;
  let rounds = 0;
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
  (pool as { connect: unknown }).connect = (...args: unknown[]) => {
    const traces = sending;
    const connecting = connect(...args);
    // Registered before the driver's own await, so this runs first when the connection comes.
    if (traces !== null && connecting instanceof Promise)
      connecting.then(
        () => {
          const at = performance.now();
          for (const trace of traces) trace.connectedAt = at;
        },
        () => undefined,
      );
    return connecting;
  };
  const tracer: RoundTripTracer = {
    db: { ...db, driver: tracedDriver() },
    statements: [],
    transactions: 0,
    reset() {
      tracer.statements.length = 0;
      tracer.transactions = 0;
    },
  };

  function tracedDriver(): Driver {
    const { driver } = db;
    const send = <R>(statements: readonly Statement[], go: () => Promise<R>): Promise<R> => {
      const round = statements.length > 1 ? ++rounds : undefined;
      const traces = statements.map((statement): StatementTrace => {
        const kind = kindOf(statement.text);
        return {
          kind,
          runIds: runIdsOf(kind, statement),
          sentAt: performance.now(),
          connectedAt: null,
          doneAt: null,
          ...(round === undefined ? {} : { round }),
        };
      });
      tracer.statements.push(...traces);
      sending = traces;
      let answer: Promise<R>;
      try {
        answer = go();
      } finally {
        sending = null;
      }
      return answer.then((result) => {
        const at = performance.now();
        for (const trace of traces) trace.doneAt = at;
        return result;
      });
    };
    return {
      ...driver,
      statement: (statement, limits) => send([statement], () => driver.statement(statement, limits)),
      ...(driver.statements === undefined
        ? {}
        : {
            statements: (statements: readonly Statement[], limits?: Parameters<Driver['statement']>[1]) =>
              send(statements, () => driver.statements!(statements, limits)),
          }),
      raw: (statement) => send([statement], () => driver.raw(statement)),
      transaction: (fn, limits) => {
        tracer.transactions += 1;
        return driver.transaction(fn, limits);
      },
    };
  }
  return tracer;
}

function kindOf(text: string): StatementKind {
  const head = text.trimStart();
  return kindByComment.find(([comment]) => head.startsWith(comment))?.[1] ?? 'other';
}

function runIdsOf(kind: StatementKind, statement: Statement): string[] {
  const first = statement.values[0];
  return kind !== 'other' && Array.isArray(first) ? first.filter((v): v is string => typeof v === 'string') : [];
}
