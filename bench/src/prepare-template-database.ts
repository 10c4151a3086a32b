import { createDatabase as openEngineDatabase, migrate } from '@sagaflow/engine';
import { createDatabase } from '@sagaflow/test-postgres';

/**
 * Creates database `name` with the engine's migrations applied, for each measured phase to clone:
 * every phase then starts on an identical, empty schema with no history of its own in the stats views.
 */
export async function prepareTemplateDatabase(adminUrl: string, name: string): Promise<void> {
  const url = await createDatabase(adminUrl, name);
  const db = await openEngineDatabase({ kind: 'postgres', url, poolSize: 2 });
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
}
