// The child worker of sigkill-during-start-bursts.pg.test.ts: an engine with its pool on the database
// URL in argv[2] starts bursts of runs at once (several start statements out together, ADR 0063) and
// runs them; an even run's first step never returns. It says `ready <worker id>`, then keeps starting
// until it is killed.
import { startChildPool } from '../../../support/child-worker-main.ts';
import { fusedSigkillConfig } from '../../fused-steps/support/fused-sigkill-flow.ts';
import { burstKillFlow } from './burst-kill-flow.ts';

const { flow, actions } = burstKillFlow(async (n) => (n % 2 === 0 ? new Promise<never>(() => undefined) : n));
const engine = await startChildPool({
  poolSize: 6,
  flows: [flow],
  actions,
  config: { ...fusedSigkillConfig, worker: { ...fusedSigkillConfig.worker, concurrency: 8 } },
});
for (let burst = 0; burst < 10; burst++)
  await Promise.allSettled(Array.from({ length: 8 }, (_, i) => engine.startFlow(flow, burst * 8 + i)));
