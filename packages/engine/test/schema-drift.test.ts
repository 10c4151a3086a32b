import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.ts';
import { actualSchema } from './schema/actual-schema.ts';
import { diffSchemas } from './schema/database-schema.ts';
import { expectedSchema, expectedSchemaFromText } from './schema/expected-schema.ts';
import { openTestDatabase, testDbKind } from './support/test-database.ts';

const schemaPath = fileURLToPath(new URL('../../../prisma/schema.prisma', import.meta.url));

describe(`schema drift (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('a freshly migrated database matches schema.prisma: tables, columns, types, nullability, defaults, indexes', async () => {
    const expected = expectedSchema(schemaPath);
    expect(Object.keys(expected.tables).length).toBeGreaterThanOrEqual(18);
    expect(diffSchemas(expected, await actualSchema(db.driver))).toEqual([]);
  });

  it('reports a field added to schema.prisma without a migration', async () => {
    const text = readFileSync(schemaPath, 'utf8').replace(
      '  business_key           String?\n',
      '  business_key           String?\n  priority Int @default(0)\n',
    );
    expect(diffSchemas(expectedSchemaFromText(text), await actualSchema(db.driver))).toEqual([
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
        const diff = diffSchemas(expectedSchema(schemaPath), await actualSchema(tx));
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
});

class Rollback extends Error {}
