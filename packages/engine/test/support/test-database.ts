import { createDatabase as createPgDatabase, uniqueDatabaseName } from '@sagaflow/test-postgres';
import { inject } from 'vitest';
import { createDatabase } from '../../src/db/create-database.ts';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { openPgliteCopy, type PgliteTemplates } from './pglite-templates.ts';

export type TestDbKind = 'pglite' | 'postgres';

/** Which database this project runs the suite on (set per vitest project). */
export function testDbKind(): TestDbKind {
  return process.env.SAGAFLOW_TEST_DB === 'postgres' ? 'postgres' : 'pglite';
}

/**
 * A fresh, migrated database for one test file: a clone of the migrated template on the real
 * PostgreSQL server, or a copy of the migrated PGlite template data directory (a new PGlite takes
 * seconds to start even so: share one per file).
 */
export async function openTestDatabase(
  opts: { migrated?: boolean; poolSize?: number; statementRounds?: boolean } = {},
): Promise<Database & { url?: string }> {
  const migrated = opts.migrated ?? true;
  if (testDbKind() === 'postgres') {
    const admin = inject('pgAdminUrl');
    const url = await createPgDatabase(
      admin,
      uniqueDatabaseName('t'),
      migrated ? { template: inject('pgTemplate') } : {},
    );
    const db = await createDatabase({
      kind: 'postgres',
      url,
      poolSize: opts.poolSize ?? 10,
      ...(opts.statementRounds === undefined ? {} : { statementRounds: opts.statementRounds }),
    });
    return Object.assign(db, { url });
  }
  // The engine-pglite project makes template data directories once (ADR 0065); elsewhere, initdb here.
  const templates = inject('pgliteTemplates') as PgliteTemplates | undefined;
  if (templates) return openPgliteCopy(templates, migrated);
  const db = await createDatabase({ kind: 'pglite' });
  if (migrated) await migrate(db);
  return db;
}
