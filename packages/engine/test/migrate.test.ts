import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { migrationsDir } from '../src/db/migrations-dir.ts';
import { EngineError } from '../src/errors/engine-error.ts';
import { openTestDatabase, testDbKind } from './support/test-database.ts';

interface Row {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  applied_steps_count: number;
}

describe(`migrate (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase({ migrated: false });
  });
  afterAll(async () => {
    await db.close();
  });

  const records = () =>
    db.driver.query<Row>(
      'select migration_name, checksum, finished_at, applied_steps_count from "sagaflow"."_prisma_migrations" order by migration_name',
    );

  it('applies every migration once and records it as prisma migrate deploy does', async () => {
    const first = await migrate(db);
    expect(first.applied).toContain('0001_init');
    const rows = await records();
    const sql = readFileSync(join(migrationsDir, '0001_init', 'migration.sql'), 'utf8');
    expect(rows[0]).toMatchObject({
      migration_name: '0001_init',
      checksum: createHash('sha256').update(sql).digest('hex'),
      applied_steps_count: 1,
    });
    expect(rows[0]?.finished_at).toBeInstanceOf(Date);
  });

  it('is idempotent: a second run applies nothing and adds no rows', async () => {
    const before = await records();
    const again = await migrate(db);
    expect(again.applied).toEqual([]);
    expect(await records()).toEqual(before);
  });

  it('refuses a database that has a migration this code does not know', async () => {
    const dir = copyOfMigrations();
    // Pretend the database was migrated by a newer release.
    await db.driver.query(
      `insert into "sagaflow"."_prisma_migrations" (id, checksum, migration_name, finished_at, applied_steps_count) values ('ahead-1', 'x', '9999_from_the_future', now(), 1)`,
    );
    try {
      await expect(migrate(db, { dir })).rejects.toMatchObject({ code: 'database_ahead' });
    } finally {
      await db.driver.query(`delete from "sagaflow"."_prisma_migrations" where id = 'ahead-1'`);
    }
  });

  it('refuses to run when an applied migration file was edited afterwards', async () => {
    const dir = copyOfMigrations();
    writeFileSync(
      join(dir, '0001_init', 'migration.sql'),
      readFileSync(join(dir, '0001_init', 'migration.sql'), 'utf8') + '\n-- edited\n',
    );
    await expect(migrate(db, { dir })).rejects.toMatchObject({ code: 'migration_modified' });
  });

  it('rolls a failing migration back whole: no half-applied tables, no bookkeeping row; the ones before it stay applied (ADR 0123)', async () => {
    const dir = copyOfMigrations();
    mkdirSync(join(dir, '9001_good'));
    writeFileSync(join(dir, '9001_good', 'migration.sql'), 'create table "sagaflow"."mig_probe" (id int);');
    mkdirSync(join(dir, '9002_broken'));
    writeFileSync(
      join(dir, '9002_broken', 'migration.sql'),
      'create table "sagaflow"."mig_probe2" (id int);\nselect * from no_such_table;',
    );
    const err = await migrate(db, { dir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect((err as EngineError).code).toBe('migration_failed');
    expect((err as EngineError).message).toContain('9002_broken');
    const probes = await db.driver.query<{ table_name: string }>(
      `select table_name from information_schema.tables where table_schema = 'sagaflow' and table_name like 'mig_probe%'`,
    );
    // Each migration commits on its own: 9001 is applied and recorded, nothing of 9002 is.
    expect(probes.map((p) => p.table_name)).toEqual(['mig_probe']);
    expect((await records()).map((r) => r.migration_name)).toEqual([
      ...readdirSync(migrationsDir)
        .filter((n) => /^\d{4}_/.test(n))
        .sort(),
      '9001_good',
    ]);
    // The next tests run the shipped migrations again: 9001 is taken out.
    await db.driver.exec(
      `drop table "sagaflow"."mig_probe"; delete from "sagaflow"."_prisma_migrations" where migration_name = '9001_good';`,
    );
  });

  it('abandons at the next migration once its signal is aborted: the migration it applied stays, the next is never begun (ADR 0109, 0123)', async () => {
    const dir = copyOfMigrations();
    for (const name of ['9101_first', '9102_second']) {
      mkdirSync(join(dir, name));
      writeFileSync(join(dir, name, 'migration.sql'), `create table "sagaflow"."abort_probe_${name}" (id int);`);
    }
    const stop = new AbortController();
    const seen: string[] = [];
    const err = await migrate(db, {
      dir,
      signal: stop.signal,
      // A SIGTERM that lands while 9101 is applied: 9102 is never begun.
      log: (e) => {
        seen.push(`${e.migration} ${e.status}`);
        if (e.migration === '9101_first' && e.status === 'applied') stop.abort();
      },
    }).catch((e: unknown) => e);
    expect((err as Error).name).toBe('AbortError');
    expect(seen).toEqual(['9101_first applying', '9101_first applied']);
    const probes = await db.driver.query<{ n: number }>(
      `select count(*)::int as n from information_schema.tables where table_schema = 'sagaflow' and table_name like 'abort_probe%'`,
    );
    expect(probes[0]?.n).toBe(1);
    expect((await records()).map((r) => r.migration_name)).toContain('9101_first');
    expect((await records()).map((r) => r.migration_name)).not.toContain('9102_second');
  });
});

function copyOfMigrations(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sagaflow-migrations-'));
  cpSync(migrationsDir, dir, { recursive: true });
  return dir;
}
