// The child worker of sigkill-with-rounds-out.pg.test.ts: review 13's bursts of starts (an even run's
// first step never returns), on a handle whose rounds (ADR 0066) it reports on stdout as they go out
// (`round out`) and come back (`round back`), so the test can kill it while one is out.
import { pino } from 'pino';
import { createDatabase, createEngine, type Database } from '../../../../src/index.ts';
import { fusedSigkillConfig } from '../../fused-steps/support/fused-sigkill-flow.ts';
import { slowStatementMs } from '../../../../src/runtime/run-statement-batches.ts';
import { burstKillFlow } from '../../review13/support/burst-kill-flow.ts';

const url = process.argv[2];
if (!url) throw new Error('usage: round-kill-worker.ts <database url>');
const { flow, actions } = burstKillFlow(async (n) => (n % 2 === 0 ? new Promise<never>(() => undefined) : n));
const holdOpen = { text: `select pg_sleep(${(2 * slowStatementMs) / 1000})`, values: [] };
const opened = await createDatabase({ kind: 'postgres', url, poolSize: 6 });
const { driver } = opened;
if (driver.statements === undefined) throw new Error('rounds are on by default: the driver must send them');
const db: Database = {
  ...opened,
  driver: {
    ...driver,
    // Each round ends, inside its transaction, by holding it open a while after its writes: slower
    // than a round may be before another goes beside it (ADR 0076), so rounds are out together, and
    // each for long enough that the test's kill, sent on this output, lands while they are.
    statements: (statements, limits) => {
      process.stdout.write('round out\n');
      return driver.statements!([...statements, holdOpen], limits)
        .then((answers) => answers.slice(0, statements.length))
        .finally(() => process.stdout.write('round back\n'));
    },
  },
};
const engine = createEngine({
  db,
  flows: [flow],
  actions,
  // Slots for every hanging run it can start before the kill, so rounds keep going out on a quiet
  // machine too (with 8, the hanging even runs filled the pool and the rounds stopped).
  config: { ...fusedSigkillConfig, worker: { ...fusedSigkillConfig.worker, concurrency: 512 } },
  logger: pino({ level: 'silent' }),
});
engine.startWorkers();
process.stdout.write(`ready ${engine.runtime.workerId}\n`);
// Bursts until the test kills it (at most 1,000 runs).
for (let burst = 0; burst < 125; burst++)
  await Promise.allSettled(Array.from({ length: 8 }, (_, i) => engine.startFlow(flow, burst * 8 + i)));
