// The child worker process of sigkill-between-fused-steps.pg.test.ts: an engine with its pool on the
// database URL in argv[2], whose middle step never returns. It prints its worker id, then waits to be killed.
import { pino } from 'pino';
import { createDatabase, createEngine } from '../../../../src/index.ts';
import { oneSlotFusedSigkillConfig, fusedSigkillFlow } from './fused-sigkill-flow.ts';

const url = process.argv[2];
if (!url) throw new Error('usage: fused-sigkill-worker.ts <database url>');
const { flow, actions } = fusedSigkillFlow(() => new Promise<never>(() => undefined));
const db = await createDatabase({ kind: 'postgres', url, poolSize: 4 });
const engine = createEngine({
  db,
  flows: [flow],
  actions,
  config: oneSlotFusedSigkillConfig,
  logger: pino({ level: 'silent' }),
});
engine.startWorkers();
process.stdout.write(`ready ${engine.runtime.workerId}\n`);
