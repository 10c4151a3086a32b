// The child worker of sigkill-during-start-bursts.pg.test.ts: an engine with its pool on the database
// URL in argv[2] starts bursts of runs at once (several start statements out together, ADR 0063) and
// runs them; an even run's first step never returns. It says `ready <worker id>`, then keeps starting
// until it is killed.
import { pino } from 'pino';
import { createDatabase, createEngine } from '../../../../src/index.ts';
import { fusedSigkillConfig } from '../../fused-steps/support/fused-sigkill-flow.ts';
import { burstKillFlow } from './burst-kill-flow.ts';

const url = process.argv[2];
if (!url) throw new Error('usage: burst-kill-worker.ts <database url>');
const { flow, actions } = burstKillFlow(async (n) => (n % 2 === 0 ? new Promise<never>(() => undefined) : n));
const db = await createDatabase({ kind: 'postgres', url, poolSize: 6 });
const engine = createEngine({
  db,
  flows: [flow],
  actions,
  config: { ...fusedSigkillConfig, worker: { ...fusedSigkillConfig.worker, concurrency: 8 } },
  logger: pino({ level: 'silent' }),
});
engine.startWorkers();
process.stdout.write(`ready ${engine.runtime.workerId}\n`);
for (let burst = 0; burst < 10; burst++)
  await Promise.allSettled(Array.from({ length: 8 }, (_, i) => engine.startFlow(flow, burst * 8 + i)));
