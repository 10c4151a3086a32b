import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { EngineError } from '../errors/engine-error.ts';
import { PrismaClient } from '../generated/prisma/client.ts';
import type { Database } from './database.ts';

/** A node-postgres client (`pg.Client`, a pool's client) on which the host ran `BEGIN`. */
export interface HostPgClient {
  query(config: { text: string; values?: unknown[] }): Promise<unknown>;
}

/**
 * A Prisma interactive transaction (`prisma.$transaction(async (tx) => …)`) of the host's own client,
 * built over the engine's pool (`new PrismaPg(db.pool)`), so the engine can find its connection.
 */
export interface HostPrismaTransaction {
  $queryRawUnsafe(query: string, ...values: unknown[]): PromiseLike<unknown>;
}

/** The host's open transaction, for `startFlow(…, { tx })` and `deliver(…, { tx })`. */
export type HostTransaction = HostPgClient | HostPrismaTransaction;

/** Where the host's transaction begins, ends and rolls back, the engine's transaction is a savepoint. */
const savepoint = 'sagaflow_host_tx';
const asSavepoint: Record<string, string> = {
  BEGIN: `SAVEPOINT ${savepoint}`,
  COMMIT: `RELEASE SAVEPOINT ${savepoint}`,
  ROLLBACK: `ROLLBACK TO SAVEPOINT ${savepoint}`,
};

/**
 * Runs `work` with a Prisma client whose statements go to the host's open transaction, so what the
 * engine writes commits if and only if the host's transaction does. The engine's own transactions
 * become savepoints inside it; the host decides COMMIT or ROLLBACK. The client lives for this call.
 */
export async function withHostTransaction<T>(
  db: Database,
  tx: HostTransaction,
  work: (prisma: PrismaClient) => Promise<T>,
): Promise<T> {
  const client = await hostClient(db, tx);
  await assertInTransaction(client);
  const prisma = new PrismaClient({ adapter: new PrismaPg(hostConnectionPool(client)) });
  try {
    return await work(prisma);
  } finally {
    await prisma.$disconnect();
  }
}

/**
 * The host's client must be inside BEGIN, checked before anything is written: a start is one
 * statement that would otherwise autocommit on its own (ADR 0029). A savepoint outside a
 * transaction block is refused by the server with 25P01.
 */
async function assertInTransaction(client: HostPgClient): Promise<void> {
  try {
    await client.query({ text: 'SAVEPOINT sagaflow_host_check' });
    await client.query({ text: 'RELEASE SAVEPOINT sagaflow_host_check' });
  } catch (err) {
    const e = err as { code?: string; message?: string };
    // 25P02 (a transaction the host already broke) also speaks of a "transaction block": only 25P01
    // means there is no BEGIN; a broken transaction's own error goes back to the host as it is.
    if (
      e.code === '25P01' ||
      (e.code === undefined && /\b25P01\b|only be used in transaction blocks/.test(e.message ?? ''))
    )
      throw new EngineError('invalid_input', 'tx: the pg client is not inside a transaction; run BEGIN on it first', {
        field: 'tx',
        cause: err,
      });
    throw err;
  }
}

async function hostClient(db: Database, tx: HostTransaction): Promise<HostPgClient> {
  if (typeof (tx as Partial<HostPgClient> | null)?.query === 'function') return tx as HostPgClient;
  const prismaTx = tx as Partial<HostPrismaTransaction> | null;
  if (typeof prismaTx?.$queryRawUnsafe !== 'function')
    throw new EngineError('invalid_input', 'tx: must be a pg client inside BEGIN or a Prisma interactive transaction', {
      field: 'tx',
    });
  const rows = (await prismaTx.$queryRawUnsafe('select pg_backend_pid() as pid')) as { pid: number }[];
  const client = db.connectionOf?.(Number(rows[0]?.pid));
  if (!client)
    throw new EngineError(
      'invalid_input',
      "tx: this Prisma transaction does not run on the engine's database pool; build the host's PrismaClient with `new PrismaPg(db.pool)`, or pass a pg client inside BEGIN",
      { field: 'tx' },
    );
  return client;
}

/**
 * What `PrismaPg` takes for a pool (it must be a `pg.Pool`), serving every statement from the host's
 * one client: statements outside a transaction run as they are, a transaction runs as a savepoint.
 */
function hostConnectionPool(client: HostPgClient): pg.Pool {
  const query = (config: { text: string; values?: unknown[] }) => client.query(config);
  const connection = {
    query: (config: { text: string; values?: unknown[] }) =>
      query({ ...config, text: asSavepoint[config.text.trim().toUpperCase()] ?? config.text }),
    on: () => connection,
    removeListener: () => connection,
    // The connection is the host's: it is never given back to a pool from here.
    release: () => undefined,
  };
  return Object.assign(Object.create(pg.Pool.prototype) as pg.Pool, { query, connect: async () => connection });
}
