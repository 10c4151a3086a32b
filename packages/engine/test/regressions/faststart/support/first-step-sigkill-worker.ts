// The child worker process of sigkill-after-start-with-first-step.pg.test.ts: an engine with its pool
// on the database URL in argv[2] starts the flow itself (its start is handed to its own pool), and
// its first step never returns. It prints the first statement the start sent, then its worker id.
import { createDatabase } from '../../../../src/index.ts';
import { urlFromArgs, startChildPool } from '../../../support/child-worker-main.ts';
import { countStatements } from '../../../support/count-statements.ts';
import { firstStepSigkillConfig, firstStepSigkillFlow } from './first-step-sigkill-flow.ts';

const { flow, actions } = firstStepSigkillFlow(() => new Promise<never>(() => undefined));
const counted = countStatements(await createDatabase({ kind: 'postgres', url: urlFromArgs(), poolSize: 4 }));
await startChildPool({
  db: counted.db,
  flows: [flow],
  actions,
  config: firstStepSigkillConfig,
  beforeReady: async (engine) => {
    const { runId } = await engine.startFlow(flow, null);
    const start = counted.sent.find(
      (s) => s.text.includes(runId) || s.values.some((v) => JSON.stringify(v).includes(runId)),
    );
    process.stdout.write(`start ${runId} ${start?.text.slice(0, start.text.indexOf('*/') + 2) ?? 'none'}\n`);
  },
});
