import type pg from 'pg';
import type { PrismaClient } from '../generated/prisma/client.ts';
import type { RawResult, RawStatement } from './raw-db.ts';

/** A transaction-capable raw SQL connection, used where Prisma's statement API cannot go (scripts). */
export interface SqlSession {
  /** Runs a script of one or more statements with the simple query protocol. */
  exec(sql: string): Promise<void>;
  query<T>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /**
   * One statement with its values read back as Prisma's raw path reads them (ADR 0039); on
   * PostgreSQL prepared by name once per connection. The run's transactions send theirs this way.
   */
  raw(statement: RawStatement): Promise<RawResult>;
}

/** Bounds of one transaction; unbounded where omitted. */
export interface TransactionLimits {
  /** How long to wait for a pooled connection before giving up (the transaction never began). */
  waitMs?: number;
  /** How long the transaction may stay open: past it, it is rolled back and its next statement throws. */
  timeoutMs?: number;
}

export interface SqlDriver extends SqlSession {
  transaction<T>(fn: (tx: SqlSession) => Promise<T>, limits?: TransactionLimits): Promise<T>;
  /**
   * One autocommitted statement, like {@link SqlSession.raw}, waiting at most `limits.waitMs` for a
   * pooled connection (past it, the pool's words are thrown and the statement was never sent): a
   * run's fused step transition or finish (ADR 0042) waits for a connection as its transaction did.
   */
  statement(statement: RawStatement, limits?: Pick<TransactionLimits, 'waitMs'>): Promise<RawResult>;
  /**
   * Several statements as ONE transaction, each as {@link statement} would send it alone, answering
   * each one's result in order (ADR 0066): all written, or none. On PostgreSQL one round trip on one
   * pooled connection (waiting for it as {@link statement} does): each statement bound and executed
   * under its own prepared name, then one Sync, so the server commits them together. A refusal (an
   * error with a SQLSTATE, the session alive) wrote nothing; any other failure may follow the commit.
   * Absent where a driver does not send rounds (PGlite, see ADR 0066): callers then send each alone.
   */
  statements?(statements: readonly RawStatement[], limits?: Pick<TransactionLimits, 'waitMs'>): Promise<RawResult[]>;
  /**
   * @internal Whether the host closed this handle (`db.close()`, or an end of its pool): then no
   * statement through it will ever succeed in this process (ADR 0129 addendum).
   */
  closed?(): boolean;
}

/** A LISTEN held on a connection of its own; see {@link Database.listen}. */
export interface Subscription {
  /** Settles once the connection is gone (with why), or after `close()`: the caller then listens again if it still wants to. */
  readonly lost: Promise<unknown>;
  close(): Promise<void>;
}

/**
 * The database handle a host builds (with {@link createDatabase}) and passes to the engine.
 * The engine holds no global client and never reads `process.env`.
 */
export interface Database {
  readonly kind: 'pglite' | 'postgres';
  /** Where it points, for logs: a data directory or a URL with the password masked. */
  readonly description: string;
  readonly prisma: PrismaClient;
  readonly driver: SqlDriver;
  /**
   * The PostgreSQL server's connection pool (absent on PGlite). A host that uses Prisma on the same
   * database builds its client on it (`new PrismaPg(db.pool)`), so its interactive transactions can
   * carry an engine write (`startFlow(…, { tx })`).
   */
  readonly pool?: pg.Pool;
  /** @internal The pool's client now checked out on this server backend (pid), if any. */
  connectionOf?(pid: number): pg.PoolClient | undefined;
  /**
   * LISTENs on `channel` and calls `onNotify` with each payload, resolving once the LISTEN is in
   * place. On PostgreSQL it holds a dedicated connection outside the pool (a pooled client would
   * stop hearing the moment it was handed back), named `sagaflow-listener` in pg_stat_activity;
   * on PGlite it uses the instance's own listeners and is never lost. Absent on a handle that
   * cannot listen: its workers poll.
   */
  listen?(channel: string, onNotify: (payload: string) => void): Promise<Subscription>;
  close(): Promise<void>;
}
