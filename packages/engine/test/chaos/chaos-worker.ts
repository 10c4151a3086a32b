// One chaos worker process: an engine with its pool on the database URL given as argv[2], until killed.
import { pino } from 'pino';
import { createDatabase, createEngine, EngineError, type Database } from '../../src/index.ts';
import { chaosActions, chaosConfig, chaosFlow } from './chaos-flow.ts';

const url = process.argv[2];
if (!url) throw new Error('usage: chaos-worker.ts <database url>');
/**
 * A replacement worker can boot while the test restarts PostgreSQL: like a host under a process
 * supervisor, it waits for the server (up to a minute) instead of exiting on the first refused connection.
 */
async function connect(target: string): Promise<Database> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await createDatabase({ kind: 'postgres', url: target, poolSize: 10 });
    } catch (err) {
      if (!(err instanceof EngineError) || err.code !== 'database_unreachable' || attempt >= 120) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
const db = await connect(url);
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
