import { createDatabase } from '@sagaflow/engine';
import { pino } from 'pino';
import { createBenchFlow } from './bench-flow.ts';
import { createBenchEngine } from './open-bench-engine.ts';

/**
 * One worker process of the bench's scale-out section, forked by run-replica-phase.ts:
 * `replica-worker.ts <database url> <concurrency>`. It runs an engine with the bench flow and a
 * worker pool of `concurrency` on its own connection pool, says `ready` over IPC, and works the
 * shared job table until the parent says `stop` (or goes away); then it drains, closes, sends how
 * many errors the engine logged (a failed job waits out its lease: the parent reports them) and exits.
 */
const [url, concurrencyArg] = process.argv.slice(2);
const concurrency = Number(concurrencyArg);
if (!url || !Number.isInteger(concurrency) || concurrency < 1 || !process.send) {
  process.stderr.write('replica-worker: usage: forked with <database url> <concurrency ≥ 1>\n');
  process.exit(2);
}

const bench = createBenchFlow();
const db = await createDatabase({ kind: 'postgres', url, poolSize: concurrency + 4 });
let errors = 0;
const logger = pino(
  {
    name: 'sagaflow',
    level: 'warn',
    hooks: {
      logMethod(args, method, level) {
        if (level >= pino.levels.values.error!) errors += 1;
        method.apply(this, args);
      },
    },
  },
  pino.destination(2),
);
const engine = createBenchEngine(db, concurrency, bench, { logger });
engine.startWorkers();

let stopping: Promise<void> | null = null;
const stop = () =>
  (stopping ??= (async () => {
    // Runs still in flight when the parent stops us are not counted; a short drain is enough.
    await engine.stopWorkers(2_000);
    await db.close();
    // After a `disconnect` nobody is listening for the count.
    if (process.connected) process.send!({ errors }, () => process.exit(0));
    else process.exit(0);
  })());
process.on('message', (message) => {
  if (message === 'stop') void stop();
});
process.on('disconnect', () => void stop());
process.send('ready');
