import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';

const migrationsDir = fileURLToPath(new URL('../../../../prisma/migrations', import.meta.url));
const invariantMigration = '0030_updated_at_never_before_created_at';

/**
 * ADR 0115: a run's or an instance's updated_at is never before its created_at, whoever writes the
 * row (a replica whose business clock runs behind, an import): the lists' stale filter bounds
 * created_at by its cutoff on that rule. Rows written so before migration 0030 are brought under it,
 * and an insert or update written so afterwards keeps its created_at as its updated_at.
 */
describe(`updated_at never before created_at (${testDbKind()})`, () => {
  let db: Database;
  let before: string;
  beforeAll(async () => {
    db = await openTestDatabase({ migrated: false });
    before = mkdtempSync(join(tmpdir(), 'sagaflow-migrations-'));
    for (const name of readdirSync(migrationsDir).filter((n) => /^\d{4}_/.test(n) && n < invariantMigration))
      cpSync(join(migrationsDir, name), join(before, name), { recursive: true });
  });
  afterAll(async () => {
    await db.close();
    rmSync(before, { recursive: true, force: true });
  });

  const skewed = async (table: 'flow_runs' | 'saga_instances') =>
    (
      await db.driver.query<{ n: number }>(
        `select count(*)::int as n from "sagaflow"."${table}" where updated_at < created_at`,
      )
    )[0]?.n;

  it('mends the rows written before it, and clamps every later insert or update written so', async () => {
    await migrate(db, { dir: before });
    await db.driver.exec(`
      insert into "sagaflow"."flow_runs" (flow_name, flow_version, input, created_at, updated_at)
      values ('skew', 1, '{}'::jsonb, '2026-01-01T00:00:05Z', '2026-01-01T00:00:01Z'),
             ('fine', 1, '{}'::jsonb, '2026-01-01T00:00:05Z', '2026-01-01T00:00:09Z');
      insert into "sagaflow"."saga_instances" (process_name, correlation_key, current_state, created_at, updated_at)
      values ('skew', 'a', 'Open', '2026-01-01T00:00:05Z', '2026-01-01T00:00:01Z');`);
    expect(await skewed('flow_runs')).toBe(1);

    expect((await migrate(db, { dir: migrationsDir })).applied).toContain(invariantMigration);
    expect(await skewed('flow_runs')).toBe(0);
    expect(await skewed('saga_instances')).toBe(0);
    const runs = await db.driver.query<{ flow_name: string; updated_at: Date }>(
      `select flow_name, updated_at from "sagaflow"."flow_runs" order by flow_name`,
    );
    expect(runs.map((r) => [r.flow_name, new Date(r.updated_at).toISOString()])).toEqual([
      ['fine', '2026-01-01T00:00:09.000Z'],
      ['skew', '2026-01-01T00:00:05.000Z'],
    ]);

    // A replica behind the one that created the row writes an update "before" it; an import likewise.
    await db.driver.exec(`
      update "sagaflow"."flow_runs" set updated_at = '2026-01-01T00:00:02Z', status = 'Running';
      update "sagaflow"."saga_instances" set updated_at = '2026-01-01T00:00:02Z', version = version + 1;
      insert into "sagaflow"."flow_runs" (flow_name, flow_version, input, created_at, updated_at)
      values ('imported', 1, '{}'::jsonb, '2026-01-01T00:00:07Z', '2026-01-01T00:00:03Z');`);
    expect(await skewed('flow_runs')).toBe(0);
    expect(await skewed('saga_instances')).toBe(0);
    const after = await db.driver.query<{ flow_name: string; status: string; updated_at: Date }>(
      `select flow_name, status, updated_at from "sagaflow"."flow_runs" order by flow_name`,
    );
    expect(after.map((r) => [r.flow_name, r.status, new Date(r.updated_at).toISOString()])).toEqual([
      ['fine', 'Running', '2026-01-01T00:00:05.000Z'],
      ['imported', 'Pending', '2026-01-01T00:00:07.000Z'],
      ['skew', 'Running', '2026-01-01T00:00:05.000Z'],
    ]);
  });
});
