// A process that opens an embedded data directory (argv[2]) the way a host does, records the note
// given as argv[3] in it, says `ready <pid>` and holds it until SIGTERM (a clean close) or SIGKILL.
import { createDatabase } from '../../src/db/create-database.ts';

const [dataDir, note] = process.argv.slice(2);
if (!dataDir || !note) throw new Error('usage: hold-data-dir.ts <data dir> <note>');
try {
  const db = await createDatabase({ kind: 'pglite', dataDir });
  await db.driver.exec('create table if not exists notes (note text not null)');
  await db.driver.query('insert into notes (note) values ($1)', [note]);
  process.stdout.write(`ready ${process.pid}\n`);
  process.on('SIGTERM', () => {
    void db.close().then(() => process.exit(0));
  });
  setInterval(() => undefined, 60_000);
} catch (err) {
  process.stderr.write(`${(err as { code?: string }).code ?? 'error'}: ${(err as Error).message}\n`);
  process.exit(3);
}
