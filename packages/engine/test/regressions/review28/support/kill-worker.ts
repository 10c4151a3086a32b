// The child worker of sigkill-between-the-claim-and-the-first-step.pg.test.ts: a pool on the database
// in argv[2] claims the wakes of runs another engine started; the flow's code stops before its first
// step, after printing `in-flow <run id>`: the claim marked the run Running, no step was written.
import { startChildPool } from '../../../support/child-worker-main.ts';
import { killConfig, killFlow } from './kill-flow.ts';

const { flow, actions } = killFlow(async (runId) => {
  process.stdout.write(`in-flow ${runId}\n`);
  await new Promise<never>(() => undefined);
});
await startChildPool({ flows: [flow], actions, config: killConfig });
