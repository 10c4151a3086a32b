// The child of a-timeout-whose-sweeper-is-killed-after-its-claim-fires-once.pg.test.ts: a process
// manager on argv[2] that sweeps due timeouts and, once one is claimed and its instance locked,
// prints `locked <message id>` and never goes on. The test SIGKILLs it there.
import { pino } from 'pino';
import { createDatabase } from '../../../../src/db/create-database.ts';
import { createProcessManager } from '../../../../src/index.ts';
import { urlFromArgs } from '../../../support/child-worker-main.ts';
import { tallyProcess } from './tally-process.ts';

const db = await createDatabase({ kind: 'postgres', url: urlFromArgs(), poolSize: 2 });
const pm = createProcessManager({
  db,
  processes: [tallyProcess],
  logger: pino({ level: 'silent' }),
  faults: {
    afterLock: async ({ messageId }) => {
      process.stdout.write(`locked ${messageId}\n`);
      await new Promise<never>(() => undefined);
    },
  },
});
process.stdout.write('ready sweeper\n');
void pm.sweepProcessTimeouts();
