// The child worker process of complete-step-with-the-round-owner-killed.pg.test.ts: an engine with its
// pool on the database URL in argv[2], whose parallel branches never return. It prints its worker id,
// then waits to be killed.
import { startChildPool } from '../../../support/child-worker-main.ts';
import { roundOutConfig, roundOutFlow } from './round-out-flow.ts';

const { flow, actions } = roundOutFlow(() => new Promise<never>(() => undefined));
await startChildPool({ flows: [flow], actions, config: roundOutConfig });
