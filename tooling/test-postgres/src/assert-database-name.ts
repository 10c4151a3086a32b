import { TestPostgresError } from './test-postgres-error.ts';

/** PostgreSQL silently truncates identifiers longer than 63 bytes; refuse them instead. */
export function assertDatabaseName(name: string): void {
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes === 0 || bytes > 63) {
    throw new TestPostgresError(
      'invalid_database_name',
      `Database name "${name}" is ${bytes} bytes; PostgreSQL needs 1 to 63. Use uniqueDatabaseName(prefix) to make one.`,
    );
  }
}
