import { cpSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { migrationStatus } from '../src/db/migration-status.ts';
import { migrationsDir } from '../src/db/migrations-dir.ts';
import { openTestDatabase, testDbKind } from './support/test-database.ts';

/** A copy of the shipped migrations that tests may change. */
function copyOfMigrations(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sagaflow-migrations-'));
  cpSync(migrationsDir, dir, { recursive: true });
  return dir;
}

describe(`migrationStatus, read-only, for a readiness probe (${testDbKind()})`, () => {
  let db: Database;
  const shipped = readdirSync(migrationsDir)
    .filter((n) => /^\d{4}_/.test(n))
    .sort();
  const bookkeeping = () =>
    db.driver.query<{ n: number }>('select count(*)::int as n from "sagaflow"."_prisma_migrations"');
  beforeAll(async () => {
    db = await openTestDatabase({ migrated: false });
  });
  afterAll(async () => {
    await db.close();
  });

  it('a database never migrated has every shipped migration pending, and is left untouched', async () => {
    expect(await migrationStatus(db)).toEqual({ current: false, pending: shipped, problem: null });
    const [table] = await db.driver.query<{ present: boolean }>(
      `select to_regclass('"sagaflow"."_prisma_migrations"') is not null as present`,
    );
    expect(table?.present).toBe(false);
  });

  it('after migrate it is current; a migration shipped later is pending, by name', async () => {
    await migrate(db);
    expect(await migrationStatus(db)).toEqual({ current: true, applied: shipped.length });
    const dir = copyOfMigrations();
    cpSync(join(dir, shipped[0] ?? ''), join(dir, '9000_shipped_later'), { recursive: true });
    writeFileSync(join(dir, '9000_shipped_later', 'migration.sql'), 'select 1;');
    const before = await bookkeeping();
    expect(await migrationStatus(db, { dir })).toEqual({
      current: false,
      pending: ['9000_shipped_later'],
      problem: null,
    });
    expect(await bookkeeping()).toEqual(before);
  });

  it('an applied migration edited since is a problem named with its code, not "pending"', async () => {
    const dir = copyOfMigrations();
    writeFileSync(join(dir, shipped[0] ?? '', 'migration.sql'), '-- edited\n');
    const status = await migrationStatus(db, { dir });
    expect(status).toMatchObject({ current: false, problem: { code: 'migration_modified' } });
    expect(JSON.stringify(status)).toContain(shipped[0]);
  });
});
