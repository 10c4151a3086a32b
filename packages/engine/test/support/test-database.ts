import { createDatabase as createPgDatabase, uniqueDatabaseName } from '@sagaflow/test-postgres';
import { inject } from 'vitest';
import { createDatabase } from '../../src/db/create-database.ts';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';

export type TestDbKind = 'pglite' | 'postgres';

/** Which database this project runs the suite on (set per vitest project). */
export function testDbKind(): TestDbKind {
  return process.env.SAGAFLOW_TEST_DB === 'postgres' ? 'postgres' : 'pglite';
}

/**
 * A fresh, migrated database for one test file: a clone of the migrated template on the real
 * PostgreSQL server, or an in-memory PGlite (they take seconds to start: share one per file).
 */
export async function openTestDatabase(
  opts: { migrated?: boolean; poolSize?: number } = {},
): Promise<Database & { url?: string }> {
  const migrated = opts.migrated ?? true;
  if (testDbKind() === 'postgres') {
    const admin = inject('pgAdminUrl');
    const url = await createPgDatabase(
      admin,
      uniqueDatabaseName('t'),
      migrated ? { template: inject('pgTemplate') } : {},
    );
    const db = await createDatabase({ kind: 'postgres', url, poolSize: opts.poolSize ?? 10 });
    return Object.assign(db, { url });
  }
  const db = await createDatabase({ kind: 'pglite' });
  if (migrated) await migrate(db);
  return db;
}
