// The child worker process of sigkill-after-start-with-first-step.pg.test.ts: an engine with its pool
// on the database URL in argv[2] starts the flow itself (its start is handed to its own pool), and
// its first step never returns. It prints the first statement the start sent, then its worker id.
import { pino } from 'pino';
import { createDatabase, createEngine } from '../../../../src/index.ts';
import { countStatements } from '../../../support/count-statements.ts';
import { firstStepSigkillConfig, firstStepSigkillFlow } from './first-step-sigkill-flow.ts';

const url = process.argv[2];
if (!url) throw new Error('usage: first-step-sigkill-worker.ts <database url>');
const { flow, actions } = firstStepSigkillFlow(() => new Promise<never>(() => undefined));
const counted = countStatements(await createDatabase({ kind: 'postgres', url, poolSize: 4 }));
const engine = createEngine({
  db: counted.db,
  flows: [flow],
  actions,
  config: firstStepSigkillConfig,
  logger: pino({ level: 'silent' }),
});
engine.startWorkers();
const { runId } = await engine.startFlow(flow, null);
const start = counted.sent.find(
  (s) => s.text.includes(runId) || s.values.some((v) => JSON.stringify(v).includes(runId)),
);
process.stdout.write(`start ${runId} ${start?.text.slice(0, start.text.indexOf('*/') + 2) ?? 'none'}\n`);
process.stdout.write(`ready ${engine.runtime.workerId}\n`);
