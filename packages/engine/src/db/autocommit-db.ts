import type { PrismaClient } from '../generated/prisma/client.ts';
import type { SqlDriver } from './database.ts';
import { rawDb, type RawDb } from './raw-db.ts';

/** One per driver: the pool and every start share it instead of building their closures again. */
const perDriver = new WeakMap<SqlDriver, RawDb>();

/**
 * Where a statement sent on its own (autocommitted, outside any transaction) goes: the start's
 * insert and the worker pool's claims, acknowledgements, releases and heartbeats. Through the
 * database's driver when there is one (ADR 0043): `driver.raw`, prepared by name on a pooled
 * connection and read back by the same parsers as a run's transactions (ADR 0039), so Prisma's
 * per-call runtime leaves these too. On PostgreSQL that is `pool.query`, which waits for a connection
 * exactly as Prisma's adapter on the same pool did (the pool's `connectionTimeoutMillis`, then its
 * words "timeout exceeded when trying to connect") and destroys a connection on which the statement
 * failed; on PGlite it waits behind a transaction in flight, never inside it. Without a driver (a
 * start in the host's transaction, ADR 0028) the statement goes through `prisma`.
 */
export function autocommitDb(deps: { prisma: PrismaClient; driver?: SqlDriver }): RawDb {
  const { driver } = deps;
  if (!driver) return deps.prisma;
  let db = perDriver.get(driver);
  if (!db) {
    db = rawDb((statement) => driver.raw(statement));
    perDriver.set(driver, db);
  }
  return db;
}
