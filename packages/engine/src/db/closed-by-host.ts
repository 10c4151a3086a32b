import type { SqlDriver } from './database.ts';

/**
 * The words each driver throws for a statement sent on a handle its host closed: PGlite after (or
 * while) `close()`, pg-pool after `pool.end()`, a pg client after `client.end()`. Exact messages, not
 * a pattern: a connection the server broke off ("Connection terminated", "connection error and is not
 * queryable", ECONNREFUSED) is an outage, which may end, and is retried as one (ADR 0010, ADR 0129).
 */
const closedByHost = new Set([
  'PGlite is closed',
  'PGlite is closing',
  'Cannot use a pool after calling end on the pool',
  'Client was closed and is not queryable',
]);

/**
 * Did the statement fail because the host closed the database handle (`db.close()`, or its pool
 * ended)? Then no write through it will ever succeed in this process, and waiting for one only keeps
 * the process alive. The handle says so itself where it can (`driver.closed()`: our own close, pg-pool's
 * `ending`, PGlite's `closed`), so a driver that rewords its error is still recognised; otherwise the
 * drivers' exact words, following `cause` (a wrapper such as Prisma's keeps the driver's error there).
 */
export function closedByHostError(err: unknown, driver?: Pick<SqlDriver, 'closed'>): boolean {
  if (driver?.closed?.() === true) return true;
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 5; depth++) {
    const { message, cause } = e as { message?: unknown; cause?: unknown };
    if (typeof message === 'string' && closedByHost.has(message)) return true;
    e = cause;
  }
  return false;
}
