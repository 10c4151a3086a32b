import { describe, expect, it } from 'vitest';
import { migrationStatus } from '../../../src/db/migration-status.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';

/**
 * ADR 0065 reviewed (ADR 0069): every engine-pglite file opens a copy of one data directory migrated
 * once per run, as PostgreSQL files clone one template database. Attacked: a file that changes its
 * schema (a migration's review test adds columns, drops indexes) must not change the template nor the
 * next file's copy; rows written in one copy must not show in another; the copy must carry exactly
 * the migrations this code ships (a template made before a migration was added would be stale); an
 * unmigrated database must come without the schema. What is PGlite's own is in
 * test-pglite-copies.pglite.test.ts.
 */
const columnOf = async (db: Awaited<ReturnType<typeof openTestDatabase>>, column: string) =>
  (
    await db.driver.query<{ n: number }>(
      `select count(*)::int as n from information_schema.columns
        where table_schema = 'sagaflow' and table_name = 'flow_runs' and column_name = $1`,
      [column],
    )
  )[0]!.n;

describe(`each test database is its own (${testDbKind()})`, () => {
  it('carries exactly the shipped migrations, and a schema change or rows in one are not in the next', async () => {
    const first = await openTestDatabase();
    try {
      expect(await migrationStatus(first)).toMatchObject({ current: true });
      await first.driver.query(`alter table "sagaflow"."flow_runs" add column review13_leak text`);
      await first.driver.query(`drop index "sagaflow"."flow_runs_business_key_idx"`);
      await first.driver.query(
        `insert into "sagaflow"."flow_runs" (id, flow_name, flow_version, input, status, created_at, updated_at)
         values (gen_random_uuid(), 'review13-leak', 1, '{}', 'Pending', now(), now())`,
      );
      expect(await columnOf(first, 'review13_leak')).toBe(1);

      // Open while the first is still open and after it was changed: a copy of the template as made.
      const second = await openTestDatabase();
      try {
        expect(await columnOf(second, 'review13_leak')).toBe(0);
        const [index] = await second.driver.query<{ present: boolean }>(
          `select to_regclass('"sagaflow"."flow_runs_business_key_idx"') is not null as present`,
        );
        expect(index!.present).toBe(true);
        const [rows] = await second.driver.query<{ n: number }>(
          `select count(*)::int as n from "sagaflow"."flow_runs" where flow_name = 'review13-leak'`,
        );
        expect(rows!.n).toBe(0);
        expect(await migrationStatus(second)).toMatchObject({ current: true });
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
    }
    // And after the changed one is closed.
    const third = await openTestDatabase();
    try {
      expect(await columnOf(third, 'review13_leak')).toBe(0);
    } finally {
      await third.close();
    }
  });

  it('unmigrated, it has no schema of the engine', async () => {
    const bare = await openTestDatabase({ migrated: false });
    try {
      const [schema] = await bare.driver.query<{ n: number }>(
        `select count(*)::int as n from information_schema.schemata where schema_name = 'sagaflow'`,
      );
      expect(schema!.n).toBe(0);
      expect(await migrationStatus(bare)).toMatchObject({ current: false, problem: null });
    } finally {
      await bare.close();
    }
  });
});
