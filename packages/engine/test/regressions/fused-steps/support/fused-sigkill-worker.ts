// The child worker process of sigkill-between-fused-steps.pg.test.ts: an engine with its pool on the
// database URL in argv[2], whose middle step never returns. It prints its worker id, then waits to be killed.
import { startChildPool } from '../../../support/child-worker-main.ts';
import { oneSlotFusedSigkillConfig, fusedSigkillFlow } from './fused-sigkill-flow.ts';

const { flow, actions } = fusedSigkillFlow(() => new Promise<never>(() => undefined));
await startChildPool({ flows: [flow], actions, config: oneSlotFusedSigkillConfig });
