// A process of review 47 that migrates the database in argv[2] (with the migrations in argv[3], or the
// shipped ones): it prints `ready migrator`, then `applied <json>` or `failed <message>`, and exits.
import { createDatabase } from '../../../../src/db/create-database.ts';
import { migrate } from '../../../../src/db/migrate.ts';

const url = process.argv[2];
const dir = process.argv[3];
if (!url) throw new Error('usage: migrate-child.ts <database url> [migrations dir]');
const db = await createDatabase({ kind: 'postgres', url, poolSize: 1 });
process.stdout.write('ready migrator\n');
try {
  const result = await migrate(db, dir ? { dir } : {});
  process.stdout.write(`applied ${JSON.stringify(result)}\n`);
} catch (err) {
  process.stdout.write(`failed ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
} finally {
  await db.close();
}
