import type { PGlite, Transaction as PgliteTransaction } from '@electric-sql/pglite';
import type pg from 'pg';
import type { SqlSession, TransactionLimits } from './database.ts';
import type { RawResult, RawStatement } from './raw-db.ts';
import { RawQuery } from './raw-query.ts';
import { rawParameter } from './raw-values.ts';
import { namedStatement, renameStatement } from './statement-names.ts';

/** What a statement meets once its transaction's time limit passed (Prisma's words, so logs read alike). */
export class TransactionExpired extends Error {
  override readonly name = 'TransactionExpired';
  constructor(timeoutMs: number) {
    super(`Transaction already closed: its time limit of ${timeoutMs} ms passed and it was rolled back`);
  }
}

type PgSend = (config: pg.QueryConfig) => Promise<pg.QueryResult>;
type PgRaw = (statement: RawStatement) => Promise<RawResult>;

/**
 * A session over node-postgres: scripts and plain queries through `send`, raw statements through
 * `raw` (on one client, {@link rawOn}; on the pool, {@link inPgStatement}).
 */
export function pgSession(send: PgSend, raw: PgRaw): SqlSession {
  return {
    exec: async (sql) => {
      await send({ text: sql });
    },
    query: async <T>(sql: string, params: readonly unknown[] = []) =>
      (await send({ text: sql, values: [...params] })).rows as T[],
    raw,
  };
}

/**
 * One raw statement on one client (never on the pool: the pool would not release a client for a
 * query that brings its own callback), prepared by name when its text has one. The name's own copy
 * of the text goes out, so node-postgres's check that a name keeps its text compares two references,
 * not two texts.
 */
export async function rawOn(client: Pick<pg.ClientBase, 'query'>, statement: RawStatement): Promise<RawResult> {
  const named = namedStatement(statement.text);
  const query = new RawQuery(named?.name, named?.text ?? statement.text, statement.values.map(rawParameter));
  try {
    client.query(query);
    return await query.result;
  } catch (err) {
    // As node-postgres does: the stack then leads back to the statement's sender, not to the socket.
    if (err instanceof Error) Error.captureStackTrace(err);
    // Prepared before its result changed shape (a migration added a column): renamed, it is
    // planned afresh, so the run's work is worth trying again (the pool retries a replay).
    if (named !== undefined && isStalePlan(err)) {
      renameStatement(named);
      Object.assign(err as Error, { retryable: true });
    }
    throw err;
  }
}

/** PostgreSQL's refusal of a prepared statement whose result columns changed since it was prepared. */
export function isStalePlan(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; message?: unknown };
  return (
    e.code === '0A000' && typeof e.message === 'string' && e.message.includes('cached plan must not change result type')
  );
}

/** How a PGlite session sends a raw statement on its target (the instance, or a transaction of it). */
export type PgliteRaw = (target: PGlite | PgliteTransaction, statement: RawStatement) => Promise<RawResult>;

/**
 * A session over PGlite or one of its transactions; raw statements go through `raw` (pglite-prepared.ts:
 * prepared by name once per instance, ADR 0055).
 */
export function pgliteSession(target: PGlite | PgliteTransaction, raw: PgliteRaw): SqlSession {
  return {
    exec: async (sql) => {
      await nextTurn();
      await target.exec(sql);
    },
    query: async <T>(sql: string, params: readonly unknown[] = []) => {
      await nextTurn();
      return (await target.query<T>(sql, [...params])).rows;
    },
    raw: async (statement: RawStatement): Promise<RawResult> => {
      await nextTurn();
      return raw(target, statement);
    },
  };
}

/**
 * The event loop's next turn. PGlite runs a statement inside this process without any I/O, so a
 * replay's statements, one after the other, are a chain of promises that never lets the event loop
 * turn: while the engine is busy without a pause, no timer runs (the pool's heartbeat and poll, the
 * monitor, the maintenance loop, the host's own) and no socket is read. Each engine statement on
 * PGlite first waits for the next turn (a few microseconds), so that work gives way at every statement.
 */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Runs `fn` between BEGIN and COMMIT on ONE pooled connection, rolled back if anything throws.
 * `waitMs` bounds the wait for a connection: past it the pool's own words are thrown ("timeout
 * exceeded when trying to connect"), the transaction never began, and the connection, if it comes
 * later, goes straight back. `timeoutMs` bounds the transaction like Prisma's `timeout`: once it
 * passes, the transaction is rolled back at once (queued behind a statement in flight) and its next
 * statement, or its commit, throws {@link TransactionExpired}. A connection on which a statement
 * failed (a terminated backend, a broken socket, a server error) is released with the error, so the
 * pool destroys it instead of handing a doubtful session to the next transaction.
 */
export async function inPgTransaction<T>(
  pool: pg.Pool,
  fn: (tx: SqlSession) => Promise<T>,
  limits: TransactionLimits = {},
): Promise<T> {
  const client = await connectWithin(pool, limits.waitMs);
  let state: 'open' | 'ending' | 'expired' = 'open';
  let failed: Error | undefined;
  // A checked-out client has no pool listener: a server that ends the session (pg_terminate_backend,
  // a restart) would otherwise crash the process with an unhandled 'error' event.
  const onError = (err: Error) => void (failed ??= err);
  client.on('error', onError);
  let rollback: Promise<void> | undefined;
  const rollBack = () =>
    (rollback ??= client.query('ROLLBACK').then(
      () => undefined,
      (err: Error) => void (failed ??= err),
    ));
  const expired = () => state === 'expired';
  const guarded = async <R>(run: () => Promise<R>): Promise<R> => {
    if (expired()) throw new TransactionExpired(limits.timeoutMs ?? 0);
    try {
      return await run();
    } catch (err) {
      failed ??= err as Error;
      throw err;
    }
  };
  const send: PgSend = (config) => guarded(() => client.query(config));
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    const destroy = failed;
    client.release(destroy);
    // A destroyed client may still report its socket's end: keep swallowing it then.
    if (!destroy) client.removeListener('error', onError);
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    await send({ text: 'BEGIN' });
    if (limits.timeoutMs !== undefined) {
      timer = setTimeout(() => {
        if (state !== 'open') return;
        state = 'expired';
        // The connection goes back as soon as it is rolled back, whatever `fn` is still doing.
        void rollBack().then(release);
      }, limits.timeoutMs);
    }
    const result = await fn(pgSession(send, (statement) => guarded(() => rawOn(client, statement))));
    if (expired()) throw new TransactionExpired(limits.timeoutMs ?? 0);
    state = 'ending';
    await send({ text: 'COMMIT' });
    return result;
  } catch (err) {
    state = state === 'open' ? 'ending' : state;
    await rollBack();
    throw err;
  } finally {
    clearTimeout(timer);
    await rollback;
    release();
  }
}

/**
 * Sends one autocommitted statement on ONE pooled connection, waiting at most `waitMs` for it (past
 * it the pool's own words are thrown and nothing was sent). A connection on which the statement
 * failed is released with the error, so the pool destroys it, as {@link inPgTransaction} does.
 */
export async function inPgStatement(
  pool: pg.Pool,
  statement: RawStatement,
  limits: Pick<TransactionLimits, 'waitMs'> = {},
): Promise<RawResult> {
  const client = await connectWithin(pool, limits.waitMs);
  let failed: Error | undefined;
  // A checked-out client has no pool listener: a server ending the session must not crash the process.
  const onError = (err: Error) => void (failed ??= err);
  client.on('error', onError);
  try {
    return await rawOn(client, statement);
  } catch (err) {
    failed ??= err as Error;
    throw err;
  } finally {
    client.release(failed);
    if (!failed) client.removeListener('error', onError);
  }
}

/**
 * `pool.connect()` given up after `waitMs`; a connection that arrives after that is released unused.
 * When idle connections cover every waiter, ours included, the pool hands one over on its next tick:
 * there is nothing to wait for, so no timer is armed and no race is run (one of each per statement
 * otherwise, ADR 0049). An idle connection dropped in that tick leaves the pool's own 5 s limit.
 */
export function connectWithin(pool: pg.Pool, waitMs: number | undefined): Promise<pg.PoolClient> {
  const connecting = pool.connect();
  // The pool's own promise, not one of an async function around it: a statement's wait costs no more ticks.
  if (waitMs === undefined || (pool.idleCount > 0 && pool.idleCount >= pool.waitingCount)) return connecting;
  return connectingWithin(connecting, waitMs);
}

/** {@link connectWithin}'s race of `connecting` against `waitMs`, when a connection may not come at once. */
async function connectingWithin(connecting: Promise<pg.PoolClient>, waitMs: number): Promise<pg.PoolClient> {
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`timeout exceeded when trying to connect: no pooled connection within ${waitMs} ms`)),
      waitMs,
    );
  });
  try {
    return await Promise.race([connecting, gaveUp]);
  } catch (err) {
    connecting.then(
      (late) => late.release(),
      () => undefined,
    );
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs `fn` in a PGlite transaction (PGlite's own BEGIN/COMMIT, rolled back if `fn` throws). PGlite
 * has one session and queues transactions behind each other: `waitMs` bounds that wait as the pool's
 * does on PostgreSQL (past it the same words are thrown, and the queued start, once its turn comes,
 * rolls back without running `fn`). `timeoutMs` is kept as on PostgreSQL, except that the rollback
 * waits for the statement or code in flight: the next statement, or the commit, throws
 * {@link TransactionExpired} and rolls it all back.
 */
export async function inPgliteTransaction<T>(
  pglite: PGlite,
  raw: PgliteRaw,
  fn: (tx: SqlSession) => Promise<T>,
  limits: TransactionLimits = {},
): Promise<T> {
  let abandoned = false;
  let begin: () => void = () => undefined;
  const begun = new Promise<void>((resolve) => (begin = resolve));
  const running = pglite.transaction(async (tx) => {
    if (abandoned) throw new TransactionAbandoned();
    begin();
    const expiresAt = limits.timeoutMs === undefined ? Infinity : performance.now() + limits.timeoutMs;
    const live = () => {
      if (performance.now() >= expiresAt) throw new TransactionExpired(limits.timeoutMs ?? 0);
    };
    const session = pgliteSession(tx, raw);
    const result = await fn({
      exec: async (sql) => (live(), session.exec(sql)),
      query: async <R>(sql: string, params?: readonly unknown[]) => (live(), session.query<R>(sql, params)),
      raw: async (statement) => (live(), session.raw(statement)),
    });
    live();
    return result;
  });
  if (limits.waitMs === undefined) return running;
  const waitMs = limits.waitMs;
  // Settled before it began (PGlite closed): the race below ends at once and the caller gets its error.
  const settled = running.then(
    () => 'began' as const,
    () => 'began' as const,
  );
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<'gave-up'>((resolve) => (timer = setTimeout(() => resolve('gave-up'), waitMs)));
  try {
    if ((await Promise.race([begun, settled, gaveUp])) === 'gave-up') {
      abandoned = true;
      throw new Error(`timeout exceeded when trying to connect: PGlite's session stayed busy for ${waitMs} ms`);
    }
  } finally {
    clearTimeout(timer);
  }
  return running;
}

/** Rolls back a queued PGlite transaction whose caller stopped waiting for it. */
class TransactionAbandoned extends Error {}
