import pg from 'pg';
import type { SqlSession } from '../../db/database.ts';

/** What one maintenance step does to one table. */
export type MaintenanceCommand = 'vacuum-analyze' | 'analyze';

/**
 * `VACUUM (ANALYZE)` or `ANALYZE` of one engine table, autocommitted (VACUUM refuses to run in a
 * transaction block). One table per statement: on PGlite every other statement waits for it.
 */
export async function maintainTable(session: SqlSession, table: string, command: MaintenanceCommand): Promise<void> {
  const target = `sagaflow.${pg.escapeIdentifier(table)}`;
  await session.exec(command === 'vacuum-analyze' ? `VACUUM (ANALYZE) ${target}` : `ANALYZE ${target}`);
}
