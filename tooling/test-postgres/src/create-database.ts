import type { DatabaseError } from 'pg';

import { assertDatabaseName } from './assert-database-name.ts';
import { databaseUrl } from './database-url.ts';
import { TestPostgresError } from './test-postgres-error.ts';
import { withAdminClient } from './with-admin-client.ts';

export interface CreateDatabaseOptions {
  /**
   * Database to clone (e.g. one with migrations applied). Nobody may be connected to it while it is
   * cloned: end every pool on the template first.
   */
  readonly template?: string;
}

/**
 * Creates database `name` on the server of `adminUrl` (optionally as a copy of `template`) and
 * returns its URL. Cloning a migrated template is the fast way to give each test file a fresh schema.
 *
 * @example
 * const url = await createDatabase(cluster.adminUrl, uniqueDatabaseName('claim_action'), { template: 'migrated' });
 */
export async function createDatabase(
  adminUrl: string,
  name: string,
  opts: CreateDatabaseOptions = {},
): Promise<string> {
  assertDatabaseName(name);
  if (opts.template !== undefined) assertDatabaseName(opts.template);
  await withAdminClient(adminUrl, async (client) => {
    const template = opts.template === undefined ? '' : ` TEMPLATE ${client.escapeIdentifier(opts.template)}`;
    try {
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}${template}`);
    } catch (error) {
      throw explain(error, name, opts.template);
    }
  });
  return databaseUrl(adminUrl, name);
}

function explain(error: unknown, name: string, template: string | undefined): unknown {
  switch ((error as Partial<DatabaseError>).code) {
    case '55006':
      return new TestPostgresError(
        'template_in_use',
        `Cannot create "${name}" from template "${template}": other sessions are connected to "${template}". ` +
          'End every client and pool connected to the template (pool.end()) before cloning it.',
        { cause: error },
      );
    case '42P04':
      return new TestPostgresError(
        'database_exists',
        `Database "${name}" already exists. Use uniqueDatabaseName(prefix) for a fresh name, or dropDatabase it first.`,
        { cause: error },
      );
    case '3D000':
      return new TestPostgresError(
        'database_missing',
        `Template database "${template}" does not exist. Create it (createDatabase) and apply migrations to it first.`,
        { cause: error },
      );
    default:
      return error;
  }
}
