import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { EngineError } from '../errors/engine-error.ts';
import type { Database, SqlSession } from './database.ts';
import { migrationsDir } from './migrations-dir.ts';
import { readMigrations, type MigrationFile } from './read-migrations.ts';

/**
 * The bookkeeping table, with the exact shape `prisma migrate deploy` creates and reads, kept in the
 * engine's own schema so a host's own Prisma migrations table is never touched.
 */
const bookkeeping = `
CREATE SCHEMA IF NOT EXISTS "sagaflow";
CREATE TABLE IF NOT EXISTS "sagaflow"."_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
);`;

// Any constant works; it keeps two processes migrating one database from interleaving.
const advisoryLockKey = 0x5a6a_f10e;

/** SQLSTATEs of a migration that could not take a lock: lock_timeout (or NOWAIT) and a deadlock. */
const lockFailures: ReadonlySet<string> = new Set(['55P03', '40P01']);

// Set only on PostgreSQL (PGlite has no client socket); a server older than 14, or one on a platform
// without the check, refuses the setting and the block swallows that, keeping the transaction usable.
const clientCheck = `DO $$ BEGIN PERFORM set_config('client_connection_check_interval', '1000', true); EXCEPTION WHEN others THEN NULL; END $$`;

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

/** How a migration waits for the locks its statements take (ADR 0123). */
export interface MigrationLockOptions {
  /** `lock_timeout` of a migration's first attempt, in ms. Default 20. */
  lockTimeoutMs?: number;
  /** The longest `lock_timeout` a retry grows to, in ms. Default 2000. */
  maxLockTimeoutMs?: number;
  /** How long after its first attempt a migration stops retrying and fails with `migration_lock_timeout`, in ms. Default 300000. */
  giveUpAfterMs?: number;
}

export interface MigrateOptions {
  /** Defaults to the migrations shipped with the engine. */
  dir?: string;
  log?: (event: { migration: string; status: 'applying' | 'applied' }) => void;
  /** Where a migration that could not take a lock says so (at warn, each retry with the sessions holding locks). */
  logger?: Logger;
  /** Bounds of the waits for locks; see {@link MigrationLockOptions}. */
  locks?: MigrationLockOptions;
  /**
   * Abandons the migration at the next migration boundary once aborted (a SIGTERM during start-up):
   * the migration under way is rolled back (those before it stay applied, each committed on its own)
   * and the signal's reason is thrown.
   */
  signal?: AbortSignal;
}

export interface MigrateResult {
  applied: string[];
  alreadyApplied: number;
}

/** A session that held a lock on one of the database's tables in a transaction older than a failed attempt. */
export interface LockHolder {
  pid: number;
  application_name: string;
  state: string | null;
  open_s: number;
  /** The transaction's start (text, to the microsecond): it ends, or another begins, once this changes. */
  xact_start: string;
  query: string;
  locks: string[];
}

/**
 * Applies pending migrations in order, each with its bookkeeping row in a transaction of its own
 * under the migrators' advisory lock (ADR 0123), so a failing one leaves nothing of itself behind and
 * no lock one migration takes is held while a later one runs. Each statement waits at most
 * `lock_timeout` for a lock: past it the migration is rolled back and tried again after a backoff,
 * until `giveUpAfterMs`. Idempotent. Refuses a database that is ahead of this code (it has a
 * migration we do not know), one whose applied migration was edited since, and one with a failed
 * migration on record.
 */
export async function migrate(db: Database, options: MigrateOptions = {}): Promise<MigrateResult> {
  const files = readMigrations(options.dir ?? migrationsDir);
  const applied: string[] = [];
  for (;;) {
    const name = await applyNextWithRetries(db, files, options);
    if (name === null) return { applied, alreadyApplied: files.length - applied.length };
    applied.push(name);
    options.log?.({ migration: name, status: 'applied' });
  }
}

type Attempt =
  { kind: 'applied'; name: string } | { kind: 'none' } | { kind: 'locked'; name: string; error: Error; since: string };

/** Applies the first pending migration, retrying it while it cannot take its locks; null once none is pending. */
async function applyNextWithRetries(
  db: Database,
  files: readonly MigrationFile[],
  options: MigrateOptions,
): Promise<string | null> {
  const first = options.locks?.lockTimeoutMs ?? 20;
  const max = Math.max(first, options.locks?.maxLockTimeoutMs ?? 2000);
  const giveUpAfterMs = options.locks?.giveUpAfterMs ?? 300_000;
  const began = Date.now();
  let lockTimeoutMs = first;
  for (let attempt = 1; ; attempt++) {
    const outcome = await attemptNext(db, files, options, lockTimeoutMs);
    if (outcome.kind === 'applied') return outcome.name;
    if (outcome.kind === 'none') return null;
    const holders = await lockHolders(db, outcome.since);
    // Backoff between attempts, so that while a transaction stands in the way the engine's writes
    // queue behind the migration at most lock_timeout at a time, and seldom (ADR 0123). While a
    // session that held a lock since before the attempt is still in that transaction, trying again
    // is all but futile: the wait for it to end is longer (and ends early once it does).
    const backoffMs = Math.round(
      Math.min(10_000, (holders.length > 0 ? 1000 : 250) * 2 ** (attempt - 1)) * (0.75 + Math.random() * 0.25),
    );
    const elapsed = Date.now() - began;
    const facts = {
      migration: outcome.name,
      attempt,
      lockTimeoutMs,
      sqlstate: (outcome.error as { code?: string }).code,
      error: outcome.error.message,
      holders,
      elapsedMs: elapsed,
    };
    if (elapsed + backoffMs > giveUpAfterMs) {
      options.logger?.error(facts, 'migration could not take its locks; giving up');
      throw new EngineError(
        'migration_lock_timeout',
        `migration ${outcome.name} could not take its locks in ${Math.round(elapsed / 1000)} s (${attempt} attempts, lock_timeout up to ${lockTimeoutMs} ms) and was rolled back; nothing of it is applied (migrations before it are). ${describeHolders(holders)} End or commit that transaction (pg_terminate_backend(pid) if it is abandoned), or upgrade when it is done, then start again.`,
        { cause: outcome.error, details: facts },
      );
    }
    options.logger?.warn(
      { ...facts, retryInMs: backoffMs },
      'migration could not take a lock within lock_timeout; rolled back, retrying',
    );
    // The lock_timeout grows when no holder was found (the wait was on the short transactions of a
    // busy table), or when the same holders outlasted a few waits (they may not be what it waits for).
    const ended = holders.length > 0 ? await holdersGone(db, holders, backoffMs, options.signal) : false;
    if (holders.length === 0) await sleep(backoffMs, undefined, { signal: options.signal });
    if (holders.length === 0 || (!ended && attempt >= 3)) lockTimeoutMs = Math.min(max, lockTimeoutMs * 2);
  }
}

async function attemptNext(
  db: Database,
  files: readonly MigrationFile[],
  options: MigrateOptions,
  lockTimeoutMs: number,
): Promise<Attempt> {
  let name = '(bookkeeping)';
  let since = '';
  try {
    return await db.driver.transaction(async (tx): Promise<Attempt> => {
      // Serialise concurrent migrators; the lock is released when this migration's transaction ends.
      // Taken before lock_timeout is set: waiting for another migrator holds up no one else.
      await tx.query('select pg_advisory_xact_lock($1)', [advisoryLockKey]);
      // When this attempt began waiting for anything (to the microsecond): a session in a transaction
      // older than it, still open when the attempt timed out, may hold what the migration needed.
      since = (await tx.query<{ at: string }>('select clock_timestamp()::text as at'))[0]?.at ?? since;
      await tx.exec(`set local lock_timeout = '${Math.max(1, Math.round(lockTimeoutMs))}ms'`);
      if (db.kind === 'postgres') await tx.exec(clientCheck);
      const exists = await tx.query<{ t: string | null }>(
        `select to_regclass('"sagaflow"."_prisma_migrations"')::text as t`,
      );
      if (!exists[0]?.t) await tx.exec(bookkeeping);
      const rows = await tx.query<AppliedRow>(
        'select migration_name, checksum, finished_at, rolled_back_at from "sagaflow"."_prisma_migrations" where rolled_back_at is null order by started_at',
      );
      const file = planPending(files, rows)[0];
      if (!file) return { kind: 'none' };
      options.signal?.throwIfAborted();
      name = file.name;
      options.log?.({ migration: file.name, status: 'applying' });
      await applyOne(tx, file);
      return { kind: 'applied', name: file.name };
    });
  } catch (err) {
    const error = lockFailure(err);
    if (error) return { kind: 'locked', name, error, since };
    throw err;
  }
}

/** The driver's error when `err` (or what it wraps) is a lock that could not be taken. */
function lockFailure(err: unknown): Error | undefined {
  for (let e = err; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && lockFailures.has(code)) return e;
  }
  return undefined;
}

/**
 * Sessions that hold a lock on a table of this database in a transaction begun before `since` (the
 * failed attempt's start) and still open: the likely holders of the lock the migration waited for.
 */
async function lockHolders(db: Database, since: string): Promise<LockHolder[]> {
  if (db.kind !== 'postgres' || !since) return [];
  try {
    return await db.driver.query<LockHolder>(
      `select a.pid, coalesce(a.application_name, '') as application_name, a.state,
              floor(extract(epoch from clock_timestamp() - a.xact_start))::int as open_s,
              a.xact_start::text as xact_start,
              left(regexp_replace(coalesce(a.query, ''), '[[:space:]]+', ' ', 'g'), 200) as query,
              array_agg(distinct n.nspname || '.' || c.relname || ' ' || l.mode) as locks
         from pg_locks l
         join pg_stat_activity a on a.pid = l.pid
         join pg_class c on c.oid = l.relation
         join pg_namespace n on n.oid = c.relnamespace
        where l.locktype = 'relation' and l.granted
          and l.database = (select oid from pg_database where datname = current_database())
          and l.pid <> pg_backend_pid() and a.xact_start < $1::timestamptz
          and c.relkind in ('r', 'p', 'm') and n.nspname not in ('pg_catalog', 'information_schema')
        group by a.pid, a.application_name, a.state, a.xact_start, a.query
        order by a.xact_start
        limit 5`,
      [since],
    );
  } catch {
    // Only for the log and the error's words: a server that refuses the view's read loses nothing else.
    return [];
  }
}

function describeHolders(holders: readonly LockHolder[]): string {
  if (holders.length === 0)
    return 'No session held a lock on a table for longer than the wait when it was rolled back.';
  const each = holders.map(
    (h) =>
      `pid ${h.pid} (application_name "${h.application_name}", ${h.state ?? 'unknown state'}, transaction open ${h.open_s} s, holding ${h.locks.join(', ')}; last query: ${h.query})`,
  );
  return `Sessions holding locks in transactions older than the attempt: ${each.join('; ')}.`;
}

/**
 * Waits, without queueing for any lock, until one of `holders` has left the transaction it was in
 * (true), or `ms` passed (false).
 */
async function holdersGone(
  db: Database,
  holders: readonly LockHolder[],
  ms: number,
  signal?: AbortSignal,
): Promise<boolean> {
  const until = Date.now() + ms;
  const pids = holders.map((h) => h.pid);
  const starts = holders.map((h) => h.xact_start);
  while (Date.now() < until) {
    await sleep(Math.min(100, Math.max(0, until - Date.now())), undefined, { signal });
    const left = await db.driver
      .query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity a
           join unnest($1::int[], $2::text[]) as h(pid, xact_start) on a.pid = h.pid and a.xact_start::text = h.xact_start`,
        [pids, starts],
      )
      .catch(() => [{ n: 0 }]);
    if ((left[0]?.n ?? 0) < pids.length) return true;
  }
  return false;
}

/** Pure: which files to apply, or why the database must not be touched. */
export function planPending(files: readonly MigrationFile[], applied: readonly AppliedRow[]): MigrationFile[] {
  const known = new Map(files.map((f) => [f.name, f]));
  for (const row of applied) {
    if (row.finished_at === null) {
      throw new EngineError(
        'migration_incomplete',
        `migration ${row.migration_name} is recorded as started but never finished; inspect the database and mark it rolled back (rolled_back_at) in sagaflow._prisma_migrations before retrying.`,
      );
    }
    const file = known.get(row.migration_name);
    if (!file) {
      throw new EngineError(
        'database_ahead',
        `the database has migration ${row.migration_name}, which this version of Sagaflow does not know: it is newer than this code. Upgrade Sagaflow instead of running an older version against it.`,
      );
    }
    if (file.checksum !== row.checksum) {
      throw new EngineError(
        'migration_modified',
        `migration ${row.migration_name} was changed after it was applied (checksum differs). Restore the original file and add a new migration instead.`,
      );
    }
  }
  const done = new Set(applied.map((r) => r.migration_name));
  return files.filter((f) => !done.has(f.name));
}

async function applyOne(tx: SqlSession, file: MigrationFile): Promise<void> {
  // The migration and its bookkeeping row share one transaction: a failure rolls back all of this
  // migration, and the error names it.
  const id = randomUUID();
  try {
    await tx.query(
      'insert into "sagaflow"."_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) values ($1, $2, $3, now(), 0)',
      [id, file.checksum, file.name],
    );
    await tx.exec(file.sql);
    await tx.query(
      'update "sagaflow"."_prisma_migrations" set finished_at = now(), applied_steps_count = 1 where id = $1',
      [id],
    );
  } catch (cause) {
    throw new EngineError(
      'migration_failed',
      `migration ${file.name} failed and was rolled back: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
}
