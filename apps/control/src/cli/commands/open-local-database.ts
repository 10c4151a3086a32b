import { migrationStatus, type Database } from '@sagaflow/engine';
import { openDatabase } from '../../control-engine.ts';
import type { ControlEnv } from '../../env.ts';
import { CliError } from '../cli-error.ts';
import { exitCodes } from '../exit-codes.ts';

/**
 * Opens the database the local commands (`monitor sweep`, `doctor sweep`, `prune`) work on, and refuses
 * (exit 1) one whose migrations are not exactly this code's: the control plane migrates when it starts, these
 * commands do not, and a query on a never-migrated database failed as a raw Prisma P2010 (review 36). The
 * message names the setting and says how to migrate.
 */
export async function openLocalDatabase(env: ControlEnv, command: string): Promise<Database> {
  const db = await openDatabase(env);
  const setting = env.DATABASE_URL ? 'DATABASE_URL' : 'SAGAFLOW_DATA_DIR';
  try {
    const status = await migrationStatus(db);
    if (status.current) return db;
    const pending = status.pending;
    const shown = pending.length > 3 ? [...pending.slice(0, 3), `and ${pending.length - 3} more`] : pending;
    throw new CliError(
      exitCodes.error,
      status.problem === null
        ? `the database at ${setting} is not migrated for this version (${pending.length} migration${pending.length === 1 ? '' : 's'} ` +
            `pending: ${shown.join(', ')}), so ${command} did nothing. Start the control plane on it once ` +
            `(\`npm start\` with the same ${setting}): it applies the migrations when it starts; then run ${command} again`
        : `the database at ${setting} cannot be used by this version (${status.problem.code}: ${status.problem.message}), ` +
            `so ${command} did nothing`,
    );
  } catch (err) {
    await db.close();
    throw err;
  }
}
