import { accessSync, constants, mkdirSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { EngineError } from '../errors/engine-error.ts';
import { PrismaClient } from '../generated/prisma/client.ts';
import type { Database, SqlDriver, Subscription } from './database.ts';
import {
  inPgliteTransaction,
  inPgStatement,
  inPgTransaction,
  pgliteSession,
  pgSession,
  type PgliteRaw,
} from './run-in-transaction.ts';
import { inPgRound } from './raw-round.ts';
import { lockDataDir, type DataDirLock, type DataDirLockOptions } from './lock-data-dir.ts';

export type DatabaseOptions =
  | {
      kind: 'pglite';
      /** Persisted here; omit for an in-memory database. One process at a time may hold it. */
      dataDir?: string;
      /** The data directory's lock: how soon a killed holder's lock is stale, what to do if it is lost. */
      lock?: DataDirLockOptions;
    }
  | {
      kind: 'postgres';
      url: string;
      poolSize?: number;
      /**
       * Send the hot path's statements of several kinds waiting at one moment (starts, step
       * transitions, finishes) as ONE transaction in one round trip (ADR 0066): fewer commits per
       * flow. On by default; `false` sends each kind's statements apart, as before ADR 0066.
       */
      statementRounds?: boolean;
    };

/**
 * Builds the database handle the engine runs on: embedded PGlite (persisted to a directory) or a
 * PostgreSQL server. It checks the database answers before returning, so a bad setting fails here
 * with a message naming it. A PGlite data directory is locked for this process until `close()`;
 * while another process holds it, this fails with `data_dir_locked`, naming that process.
 *
 * @example
 * const db = await createDatabase({ kind: 'postgres', url: 'postgres://localhost/app' });
 * await migrate(db);
 */
export async function createDatabase(options: DatabaseOptions): Promise<Database> {
  return options.kind === 'pglite'
    ? openPglite(options.dataDir, options.lock)
    : openPostgres(options.url, options.poolSize, options.statementRounds ?? true);
}

async function openPglite(dataDir: string | undefined, lockOptions: DataDirLockOptions | undefined): Promise<Database> {
  let lock: DataDirLock | null = null;
  if (dataDir !== undefined) {
    ensureWritableDir(dataDir);
    // Before PGlite touches the directory: a second process must not even read it half-written.
    lock = await lockDataDir(dataDir, lockOptions);
  }
  // Loaded here, not at the top: PGlite's module alone is ~45 MB of resident memory, which a host on
  // PostgreSQL never needs (ADR 0036: the control plane's RSS).
  const [{ PGlite }, { PrismaPGlite }, { rawOnPglite }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('pglite-prisma-adapter'),
    import('./pglite-prepared.ts'),
  ]);
  let pglite: PGlite;
  try {
    pglite = new PGlite(dataDir);
    await pglite.waitReady;
  } catch (cause) {
    await lock?.release().catch(() => undefined);
    throw new EngineError(
      'data_dir_unusable',
      `data directory ${dataDir ?? '(memory)'} could not be opened as a PGlite database: ${String(cause)}. Point it at an empty directory or one created by Sagaflow.`,
      { cause },
    );
  }
  const raw: PgliteRaw = (target, statement) => rawOnPglite(pglite, target, statement);
  const session = pgliteSession(pglite, raw);
  let closing = false;
  const driver: SqlDriver = {
    ...session,
    transaction: (fn, limits) => inPgliteTransaction(pglite, raw, fn, limits),
    // One session, queued behind the transaction in flight: there is no pool to wait for.
    statement: (statement) => session.raw(statement),
    closed: () => closing || pglite.closed,
  };
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(pglite) });
  return {
    kind: 'pglite',
    description: dataDir ?? 'PGlite in memory',
    prisma,
    driver,
    listen: async (channel, onNotify) => {
      const unlisten = await pglite.listen(channel, onNotify);
      let closed: () => void = () => undefined;
      const lost = new Promise<unknown>((resolve) => (closed = () => resolve(null)));
      return {
        lost,
        close: async () => {
          closed();
          // A PGlite closed first has dropped its listeners with it.
          if (!pglite.closed) await unlisten();
        },
      };
    },
    close: async () => {
      closing = true;
      try {
        await prisma.$disconnect();
        await pglite.close();
      } finally {
        await lock?.release();
      }
    },
  };
}

function ensureWritableDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK | constants.R_OK);
  } catch (cause) {
    throw new EngineError(
      'data_dir_unusable',
      `data directory ${dir} is not writable (${(cause as NodeJS.ErrnoException).code ?? String(cause)}). Choose a directory this user can write, or fix its permissions.`,
      { cause },
    );
  }
}

async function openPostgres(url: string, poolSize = 10, statementRounds = true): Promise<Database> {
  if (typeof statementRounds !== 'boolean')
    throw new EngineError(
      'config_invalid',
      `statementRounds must be true or false, got ${JSON.stringify(statementRounds)}. Leave it out for rounds, or set false to send each kind's statements apart.`,
    );
  const description = maskUrl(url);
  // Idle connections stay open (idleTimeoutMillis 0): pg-pool's default closes one idle for 10 s, for
  // which it arms a timer at every release and clears it at the next checkout, twice per statement of
  // the hot path (ADR 0097). The pool is sized for the workers, which come back to it within a poll.
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 0,
  });
  // An idle client that errors (server restart) must not crash the host process.
  pool.on('error', () => undefined);
  // Nor a checked-out one: a server that ends the session while a connection is checked out and idle
  // (between its holder's statements, or held by a host through db.pool) sends it an error no query
  // takes, and node-postgres emits it on the client. Each connection keeps this listener for life; its
  // holder learns of the end from its next statement, which fails, and the pool drops it on release.
  pool.on('connect', (client) => client.on('error', () => undefined));
  try {
    await pool.query('select 1');
  } catch (cause) {
    await pool.end().catch(() => undefined);
    const reason = (cause as NodeJS.ErrnoException).code ?? (cause instanceof Error ? cause.message : String(cause));
    throw new EngineError(
      'database_unreachable',
      `cannot reach the PostgreSQL server at ${description} (${reason}). Check that it is running and the URL is right.`,
      { cause },
    );
  }
  let closing = false;
  const driver: SqlDriver = {
    ...pgSession(
      (config) => pool.query(config),
      (statement) => inPgStatement(pool, statement),
    ),
    transaction: (fn, limits) => inPgTransaction(pool, fn, limits),
    statement: (statement, limits) => inPgStatement(pool, statement, limits),
    closed: () => closing || pool.ending || pool.ended,
    // Unless turned off: the hot path sends rounds exactly where the driver has this method.
    ...(statementRounds
      ? {
          statements: (statements: Parameters<NonNullable<SqlDriver['statements']>>[0], limits?: { waitMs?: number }) =>
            inPgRound(pool, statements, limits),
        }
      : {}),
  };
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return {
    kind: 'postgres',
    description,
    prisma,
    driver,
    pool,
    connectionOf: (pid) => checkedOutClient(pool, pid),
    listen: (channel, onNotify) => listenOnOwnConnection(url, channel, onNotify),
    close: async () => {
      closing = true;
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

/**
 * The client of `pool` checked out on backend `pid`: how a host's Prisma transaction on this pool is
 * joined. Read from pg-pool's own lists (its clients, and the idle ones among them) when a host asks,
 * instead of following every checkout with 'acquire' and 'release' listeners: two events and two map
 * writes per statement on the hot path, for a lookup only a host's transaction makes (ADR 0097).
 */
function checkedOutClient(pool: pg.Pool, pid: number): pg.PoolClient | undefined {
  const lists = pool as unknown as { _clients?: pg.PoolClient[]; _idle?: { client: pg.PoolClient }[] };
  if (!Array.isArray(lists._clients) || !Array.isArray(lists._idle))
    throw new Error("pg-pool no longer keeps its clients in _clients and _idle: a host's transaction cannot be joined");
  const idle = new Set(lists._idle.map((item) => item.client));
  return lists._clients.find(
    (client) => !idle.has(client) && (client as unknown as { processID: number | null }).processID === pid,
  );
}

async function listenOnOwnConnection(
  url: string,
  channel: string,
  onNotify: (payload: string) => void,
): Promise<Subscription> {
  // In the URL: pg lets a connection string's parameters override the options beside it.
  const named = new URL(url);
  named.searchParams.set('application_name', 'sagaflow-listener');
  const client = new pg.Client({
    connectionString: named.toString(),
    connectionTimeoutMillis: 5_000,
    // A half-open TCP connection (a server gone without a FIN) would otherwise look alive for hours.
    keepAlive: true,
  });
  let gone: (why: unknown) => void = () => undefined;
  const lost = new Promise<unknown>((resolve) => (gone = resolve));
  // Either event may come first when the server ends the session (pg_terminate_backend, a restart).
  client.on('error', (err) => gone(err));
  client.on('end', () => gone(new Error('the listener connection ended')));
  client.on('notification', (n) => {
    if (n.channel === channel) onNotify(n.payload ?? '');
  });
  try {
    await client.connect();
    await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
  return {
    lost,
    close: async () => {
      gone(null);
      await client.end().catch(() => undefined);
    },
  };
}

function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}
