// The child worker process of dead-owner-sigkill.pg.test.ts: an engine with its pool on the
// database URL in argv[2], whose charge step never returns. It prints its worker id, then waits to be killed.
import { startChildPool } from '../../../support/child-worker-main.ts';
import { sigkillConfig, sigkillFlow } from './sigkill-flow.ts';

const { flow, actions } = sigkillFlow(() => new Promise<never>(() => undefined));
await startChildPool({ flows: [flow], actions, config: sigkillConfig });
