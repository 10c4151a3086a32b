import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createDatabase,
  createEngine,
  migrate,
  type Database,
  type Engine,
  type MigrateResult,
} from '@sagaflow/engine';
import { pino, type Logger } from 'pino';
import { createAccountDirectory, type AccountDirectory } from './account-directory.ts';
import { createRequestHandler } from './create-request-handler.ts';
import { defineSignupSaga } from './signup-saga.ts';

export interface ServiceOptions {
  /** A PostgreSQL server. When absent, embedded PGlite is used. */
  databaseUrl?: string;
  /** PGlite's data directory (when no `databaseUrl`); omit both for an in-memory database. */
  dataDir?: string;
  host?: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** How long a signup waits for verification before it is undone. Default: one day. */
  verifyWithinSeconds?: number;
  workerConcurrency?: number;
  logger?: Logger;
}

export interface Service {
  url: string;
  engine: Engine;
  db: Database;
  accounts: AccountDirectory;
  /** What `migrate(db)` did at start-up. */
  migrations: MigrateResult;
  /** Stops taking requests, drains the workers (10 s at most), closes the database. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts the signup service with the Sagaflow engine embedded: its own database handle, the
 * engine's migrations, its own flow and actions, workers in this process, and a plain HTTP API.
 *
 * @example
 * const service = await startService({ databaseUrl: process.env.DATABASE_URL, port: 4100 });
 * process.once('SIGTERM', () => void service.stop());
 */
export async function startService(options: ServiceOptions): Promise<Service> {
  const logger = options.logger ?? pino({ name: 'signup-service' });
  // 1. The database handle is the host's: the engine never opens one of its own.
  const db = options.databaseUrl
    ? await createDatabase({ kind: 'postgres', url: options.databaseUrl })
    : await createDatabase({ kind: 'pglite', ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }) });
  logger.info({ database: db.description }, 'database open');
  try {
    // 2. The engine's schema (the `sagaflow` Postgres schema); idempotent, safe from several processes.
    const migrations = await migrate(db, { log: (e) => logger.info(e, 'migration') });

    // 3. Definitions are registered once, when the engine is built.
    const accounts = createAccountDirectory();
    const { signupFlow, actions } = defineSignupSaga(accounts);
    const engine = createEngine({
      db,
      flows: [signupFlow],
      actions,
      config: { worker: { concurrency: options.workerConcurrency ?? 4 } },
      logger: logger.child({ component: 'sagaflow' }),
    });

    const server = createServer(
      createRequestHandler({
        engine,
        signupFlow,
        verifyWithinSeconds: options.verifyWithinSeconds ?? 86_400,
        logger,
      }),
    );
    const host = options.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, host, () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const url = `http://${host}:${port}`;

    // 4. Workers run the flows in this process; start them once the service can take requests.
    engine.startWorkers();
    logger.info({ url }, 'signup service listening');

    let stopping: Promise<void> | null = null;
    const stop = () =>
      (stopping ??= (async () => {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        const { drained } = await engine.stopWorkers(10_000);
        if (!drained) logger.warn('in-flight steps did not finish in 10 s; they are redelivered after their lease');
        await db.close();
        logger.info('signup service stopped');
      })());
    return { url, engine, db, accounts, migrations, stop };
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
}
