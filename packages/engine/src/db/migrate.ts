import { randomUUID } from 'node:crypto';
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

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

export interface MigrateOptions {
  /** Defaults to the migrations shipped with the engine. */
  dir?: string;
  log?: (event: { migration: string; status: 'applying' | 'applied' }) => void;
  /**
   * Abandons the migration at the next migration boundary once aborted (a SIGTERM during start-up):
   * the transaction is rolled back, so the database is left as it was, and the signal's reason is thrown.
   */
  signal?: AbortSignal;
}

export interface MigrateResult {
  applied: string[];
  alreadyApplied: number;
}

/**
 * Applies pending migrations and their bookkeeping rows in one transaction, so a failing one
 * leaves nothing behind. Idempotent. Refuses a database that is ahead of this code (it has a
 * migration we do not know), one whose applied migration was edited since, and one with a failed
 * migration on record.
 */
export async function migrate(db: Database, options: MigrateOptions = {}): Promise<MigrateResult> {
  const files = readMigrations(options.dir ?? migrationsDir);
  return db.driver.transaction(async (lockTx) => {
    // Serialise concurrent migrators; the lock is released when this transaction ends.
    await lockTx.query('select pg_advisory_xact_lock($1)', [advisoryLockKey]);
    await lockTx.exec(bookkeeping);
    const applied = await lockTx.query<AppliedRow>(
      'select migration_name, checksum, finished_at, rolled_back_at from "sagaflow"."_prisma_migrations" where rolled_back_at is null order by started_at',
    );
    const pending = planPending(files, applied);
    for (const file of pending) {
      options.signal?.throwIfAborted();
      options.log?.({ migration: file.name, status: 'applying' });
      await applyOne(lockTx, file);
      options.log?.({ migration: file.name, status: 'applied' });
    }
    return { applied: pending.map((f) => f.name), alreadyApplied: files.length - pending.length };
  });
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
  // Every pending migration shares the lock's transaction: a failure rolls back all this call did,
  // and the error names the migration that failed.
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
