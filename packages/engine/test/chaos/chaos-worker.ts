// One chaos worker process: an engine with its pool on the database URL given as argv[2], until killed.
import { pino } from 'pino';
import { createDatabase, createEngine } from '../../src/index.ts';
import { chaosActions, chaosConfig, chaosFlow } from './chaos-flow.ts';

const url = process.argv[2];
if (!url) throw new Error('usage: chaos-worker.ts <database url>');
const db = await createDatabase({ kind: 'postgres', url, poolSize: 10 });
const engine = createEngine({
  db,
  flows: [chaosFlow],
  actions: chaosActions,
  config: chaosConfig,
  logger: pino({ level: 'silent' }),
});
engine.startWorkers();
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void engine
    .stopWorkers(2000)
    .then(() => db.close())
    .then(() => process.exit(0));
});
