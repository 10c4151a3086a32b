import { assertDatabaseName } from './assert-database-name.ts';
import { withAdminClient } from './with-admin-client.ts';

/**
 * Drops database `name` on the server of `adminUrl`, disconnecting anyone still connected
 * (`WITH (FORCE)`). Does nothing if it does not exist, so it is safe in `afterAll` after a failed setup.
 */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  assertDatabaseName(name);
  await withAdminClient(adminUrl, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
  });
}
