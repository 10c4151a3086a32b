import type { PrismaClient } from '../generated/prisma/client.ts';
import type { SqlDriver } from './database.ts';
import { rawDb, type RawDb } from './raw-db.ts';
import { isStalePlan } from './run-in-transaction.ts';

/**
 * Where a statement sent on its own (autocommitted, outside any transaction) goes: the start's insert
 * and the worker pool's claims, acknowledgements, releases and heartbeats. Through the database's
 * driver when there is one (ADR 0043), so Prisma's per-call runtime leaves these statements too:
 * `driver.statement` (the fused step statements' path too, ADR 0042) prepares each by name and reads
 * it back by the same parsers as a run's transactions (ADR 0039). On PostgreSQL that is one pooled
 * connection per statement: given no wait of its own, it waits for a connection as Prisma's adapter
 * on the same pool did (the pool's connection timeout, then "timeout exceeded when trying to
 * connect", which `isNoConnectionInTime` knows) and destroys a connection on which the statement failed. On PGlite it waits behind a transaction in flight and never runs inside
 * it. Without a driver (a start in the host's transaction, ADR 0028) the statements go through `prisma`.
 *
 * A statement refused because it was prepared before a migration changed its result's shape (the
 * start returns `flow_runs` whole) ran nothing, and the driver has renamed it: it is sent once more,
 * prepared afresh, where Prisma's unnamed statement was simply planned again.
 */
export function autocommitDb(deps: { prisma: PrismaClient; driver?: SqlDriver }): RawDb {
  const { driver } = deps;
  if (!driver) return deps.prisma;
  return rawDb(async (statement) => {
    try {
      return await driver.statement(statement);
    } catch (err) {
      if (!isStalePlan(err)) throw err;
      return driver.statement(statement);
    }
  });
}
