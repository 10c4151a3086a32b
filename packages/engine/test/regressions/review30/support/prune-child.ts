// The child of prune-killed-mid-batch.pg.test.ts: an engine (no worker pool: nothing but the prune
// touches the database) on the database in argv[2] that, on the test's first line, prunes everything
// older than 30 days in batches of argv[3] runs, then prints `pruned <rows deleted per table>`.
import { pino } from 'pino';
import { createDatabase, createEngine } from '../../../../src/index.ts';
import { linesFromTest, urlFromArgs } from '../../../support/child-worker-main.ts';

const next = linesFromTest();
const db = await createDatabase({ kind: 'postgres', url: urlFromArgs(), poolSize: 2 });
const engine = createEngine({ db, flows: [], actions: [], logger: pino({ level: 'silent' }) });
process.stdout.write(`ready ${engine.runtime.workerId}\n`);
await next();
const report = await engine.retention.prune({ olderThanSeconds: 30 * 86_400, batchSize: Number(process.argv[3]) });
process.stdout.write(`pruned ${JSON.stringify(report.deleted)}\n`);
process.exit(0);
