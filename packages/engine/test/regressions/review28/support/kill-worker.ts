// The child worker of sigkill-between-the-claim-and-the-first-step.pg.test.ts: a pool on the database
// in argv[2] claims the wakes of runs another engine started; the flow's code stops before its first
// step, after printing `in-flow <run id>`: the claim marked the run Running, no step was written.
import { pino } from 'pino';
import { createDatabase, createEngine } from '../../../../src/index.ts';
import { killConfig, killFlow } from './kill-flow.ts';

const url = process.argv[2];
if (!url) throw new Error('usage: kill-worker.ts <database url>');
const { flow, actions } = killFlow(async (runId) => {
  process.stdout.write(`in-flow ${runId}\n`);
  await new Promise<never>(() => undefined);
});
const engine = createEngine({
  db: await createDatabase({ kind: 'postgres', url, poolSize: 4 }),
  flows: [flow],
  actions,
  config: killConfig,
  logger: pino({ level: 'silent' }),
});
process.stdout.write(`ready ${engine.runtime.workerId}\n`);
engine.startWorkers();
