// One of several processes started at once on the same empty database: each migrates, then says what it saw.
import { createDatabase, migrate, migrationStatus } from '@sagaflow/engine';
const db = await createDatabase({ kind: 'postgres', url: process.argv[2] });
await migrate(db);
const status = await migrationStatus(db);
await db.close();
console.log(JSON.stringify({ current: status.current, applied: status.current ? status.applied : null }));
