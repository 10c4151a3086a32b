// The child worker of a-step-of-a-worker-that-never-beat-is-judged.pg.test.ts: a pool on argv[2] whose
// charge step never returns while the test looks. The test SIGKILLs it.
import { startChildPool } from '../../../support/child-worker-main.ts';
import { unbeatenConfig, unbeatenFlow } from './unbeaten-flow.ts';

const { flow, actions } = unbeatenFlow(() => new Promise<never>(() => undefined));
await startChildPool({ flows: [flow], actions, config: unbeatenConfig });
