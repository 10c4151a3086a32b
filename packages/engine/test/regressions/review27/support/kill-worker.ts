// The child worker process of sigkill-while-it-holds-a-late-write.pg.test.ts: an engine with its pool on the
// database URL in argv[2] (the test's cuttable proxy). It prints `ready <worker id>`, `ran <name>` as each action
// starts, and its warnings as JSON lines; `side` returns once a line arrives on stdin. The late write's retry
// budget is long (it keeps trying through the outage). It waits to be killed.
import { pino } from 'pino';
import { linesFromTest, startChildPool } from '../../../support/child-worker-main.ts';
import { killFlows } from './kill-flows.ts';

const { flows, actions } = killFlows((name) => process.stdout.write(`ran ${name}\n`), linesFromTest());
await startChildPool({
  flows,
  actions,
  logger: pino({ level: 'warn' }, process.stdout),
  config: {
    worker: {
      poll_interval_ms: 50,
      outcome_retry: { max_attempts: 1000, base_delay_ms: 20, max_delay_ms: 100 },
      transaction_wait_ms: 200,
    },
    logging: { anomaly_level: null },
  },
});
