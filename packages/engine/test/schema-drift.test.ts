import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.ts';
import { actualSchema } from './schema/actual-schema.ts';
import { diffSchemas, type SchemaShape } from './schema/database-schema.ts';
import { deparsePredicates } from './schema/deparse-predicates.ts';
import { expectedSchema, expectedSchemaFromText } from './schema/expected-schema.ts';
import { openTestDatabase, testDbKind } from './support/test-database.ts';

const schemaPath = fileURLToPath(new URL('../../../prisma/schema.prisma', import.meta.url));

describe(`schema drift (${testDbKind()})`, () => {
  let db: Database;
  let expected: SchemaShape;
  beforeAll(async () => {
    db = await openTestDatabase();
    expected = await deparsePredicates(db.driver, expectedSchema(schemaPath));
  });
  afterAll(async () => {
    await db.close();
  });

  it('a freshly migrated database matches schema.prisma: tables, columns, types, nullability, defaults, indexes and their predicates', async () => {
    expect(Object.values(expected.indexes).filter((i) => i.predicate !== null).length).toBeGreaterThanOrEqual(28);
    expect(Object.keys(expected.tables).length).toBeGreaterThanOrEqual(18);
    expect(Object.keys(expected.foreignKeys).length).toBeGreaterThanOrEqual(9);
    expect(diffSchemas(expected, await actualSchema(db.driver))).toEqual([]);
  });

  it('reports a field added to schema.prisma without a migration', async () => {
    const text = readFileSync(schemaPath, 'utf8').replace(
      '  business_key           String?\n',
      '  business_key           String?\n  priority Int @default(0)\n',
    );
    const withField = await deparsePredicates(db.driver, expectedSchemaFromText(text));
    expect(diffSchemas(withField, await actualSchema(db.driver))).toEqual([
      'column flow_runs.priority: missing in database',
    ]);
  });

  it('reports a migration that changed nullability, a default and dropped an index', async () => {
    await db.driver
      .transaction(async (tx) => {
        await tx.exec(`
        alter table "sagaflow"."action_runs" alter column "claimed_by" set not null;
        alter table "sagaflow"."action_runs" alter column "attempts" set default 1;
        drop index "sagaflow"."action_runs_reclaim_stale_at_idx";
        create index "stray_idx" on "sagaflow"."jobs"("kind");`);
        const diff = diffSchemas(expected, await actualSchema(tx));
        expect(diff).toEqual(
          expect.arrayContaining([
            'column action_runs.claimed_by: nullable is false in database, true in schema',
            'column action_runs.attempts: default is 1 in database, 0 in schema',
            'index action_runs_reclaim_stale_at_idx: missing in database',
            'index stray_idx: in database, not in schema',
          ]),
        );
        expect(diff).toHaveLength(4);
        throw new Rollback();
      })
      .catch((e: unknown) => {
        if (!(e instanceof Rollback)) throw e;
      });
  });

  it('reports a partial index the migrations built whole, or with another predicate', async () => {
    await db.driver
      .transaction(async (tx) => {
        await tx.exec(`
        drop index "sagaflow"."flow_runs_business_key_idx";
        create index "flow_runs_business_key_idx" on "sagaflow"."flow_runs"("business_key");
        drop index "sagaflow"."action_runs_reclaim_stale_at_idx";
        create index "action_runs_reclaim_stale_at_idx" on "sagaflow"."action_runs"("reclaim_stale_at")
          where status = 'Running';`);
        const diff = diffSchemas(expected, await actualSchema(tx));
        expect(diff).toHaveLength(2);
        expect(diff[0]).toMatch(
          /^index flow_runs_business_key_idx: .*"predicate":null.* in database, .*"predicate":"\(business_key IS NOT NULL\)"/,
        );
        expect(diff[1]).toMatch(
          /^index action_runs_reclaim_stale_at_idx: .*"predicate":"\(status = 'Running'::text\)".* in database, .*"predicate":"\(reclaim_stale_at IS NOT NULL\)"/,
        );
        throw new Rollback();
      })
      .catch((e: unknown) => {
        if (!(e instanceof Rollback)) throw e;
      });
  });

  it('reports a migration that dropped a foreign key, changed one’s action or added one the schema does not declare', async () => {
    await db.driver
      .transaction(async (tx) => {
        await tx.exec(`
        alter table "sagaflow"."flow_events" drop constraint "flow_events_run_id_fkey";
        alter table "sagaflow"."sessions" drop constraint "sessions_operator_id_fkey";
        alter table "sagaflow"."sessions" add constraint "sessions_operator_id_fkey" foreign key ("operator_id")
          references "sagaflow"."operators"("id") on delete restrict on update cascade;
        alter table "sagaflow"."jobs" add constraint "jobs_run_id_fkey" foreign key ("run_id")
          references "sagaflow"."flow_runs"("id") not valid;`);
        const diff = diffSchemas(expected, await actualSchema(tx));
        expect(diff).toHaveLength(3);
        expect(diff).toEqual(
          expect.arrayContaining([
            'foreign key flow_events_run_id_fkey: missing in database',
            'foreign key jobs_run_id_fkey: in database, not in schema',
          ]),
        );
        expect(diff.find((d) => d.startsWith('foreign key sessions_operator_id_fkey:'))).toMatch(
          /"onDelete":"Restrict".* in database, .*"onDelete":"Cascade".* in schema$/,
        );
        throw new Rollback();
      })
      .catch((e: unknown) => {
        if (!(e instanceof Rollback)) throw e;
      });
  });
});

class Rollback extends Error {}
