import { EngineError } from '../errors/engine-error.ts';
import type { Database } from './database.ts';
import { planPending } from './migrate.ts';
import { migrationsDir } from './migrations-dir.ts';
import { readMigrations } from './read-migrations.ts';

export type MigrationStatus =
  | { current: true; applied: number }
  /** `pending`: migrations this code ships that the database lacks. */
  | { current: false; pending: string[]; problem: null }
  /** The database must not be used by this code: ahead of it, edited, or a failed migration on record. */
  | { current: false; pending: string[]; problem: { code: string; message: string } };

/**
 * Whether the database has exactly the migrations this code ships, read-only (a readiness probe asks
 * this; {@link migrate} is what changes it). Same rules as `migrate`: an unknown, edited or unfinished
 * migration on record is a problem, not just "pending". Database errors (unreachable) are thrown.
 */
export async function migrationStatus(
  db: Pick<Database, 'driver'>,
  options: { dir?: string } = {},
): Promise<MigrationStatus> {
  const files = readMigrations(options.dir ?? migrationsDir);
  const [table] = await db.driver.query<{ present: boolean }>(
    `select to_regclass('"sagaflow"."_prisma_migrations"') is not null as present`,
  );
  if (!table?.present) return { current: false, pending: files.map((f) => f.name), problem: null };
  const applied = await db.driver.query<{
    migration_name: string;
    checksum: string;
    finished_at: Date | null;
    rolled_back_at: Date | null;
  }>(
    'select migration_name, checksum, finished_at, rolled_back_at from "sagaflow"."_prisma_migrations" where rolled_back_at is null order by started_at',
  );
  try {
    const pending = planPending(files, applied).map((f) => f.name);
    return pending.length === 0 ? { current: true, applied: files.length } : { current: false, pending, problem: null };
  } catch (err) {
    if (!(err instanceof EngineError)) throw err;
    return { current: false, pending: [], problem: { code: err.code, message: err.message } };
  }
}
