// The child worker process of a-frozen-worker-that-resumes-is-not-gone.pg.test.ts: an engine with its
// pool on the database URL in argv[2], whose charge step is long (it does not return while the test
// looks). The test SIGSTOPs and SIGCONTs it.
import { startChildPool } from '../../../support/child-worker-main.ts';
import { frozenConfig, frozenFlow } from './frozen-flow.ts';

const { flow, actions } = frozenFlow(() => new Promise<never>(() => undefined));
await startChildPool({ flows: [flow], actions, config: frozenConfig });
