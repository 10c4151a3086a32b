// One outbox relay process of review 48: a real outbox publisher on the database in argv[2], posting every
// row routed to `sink` to the webhook at argv[3], with the outbox config given as JSON in argv[4]. It waits
// for the server (a relay booting while the test restarts PostgreSQL), prints `ready` and relays until killed.
import { pino } from 'pino';
import {
  createDatabase,
  EngineError,
  startOutboxPublisher,
  webhookTransport,
  type Database,
} from '../../../../src/index.ts';

const [url, sinkUrl, configJson] = process.argv.slice(2);
if (!url || !sinkUrl || !configJson)
  throw new Error('usage: relay-worker.ts <database url> <sink url> <outbox config json>');

async function connect(target: string): Promise<Database> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await createDatabase({ kind: 'postgres', url: target, poolSize: 6 });
    } catch (err) {
      if (!(err instanceof EngineError) || err.code !== 'database_unreachable' || attempt >= 120) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
const db = await connect(url);
const publisher = startOutboxPublisher({
  db,
  routes: { sink: webhookTransport({ url: sinkUrl, secret: 'review48-secret', timeoutMs: 10_000 }) },
  config: JSON.parse(configJson) as Record<string, never>,
  logger: pino({ level: process.env.R48_LOG ?? 'silent' }),
});
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void publisher
    .stop()
    .then(() => db.close())
    .then(() => process.exit(0));
});
