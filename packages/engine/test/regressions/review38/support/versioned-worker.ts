// A worker process of one deploy of review 38's service, on the database in argv[2], with the code of the
// mode in argv[3]: `v1` (r38-deploy version 1), `v2` (r38-deploy version 2), `none` (no r38-deploy at all).
// Every mode but `none` also has r38-coin. It prints `ready <worker id>` and works until SIGKILLed.
import { startChildPool } from '../../../support/child-worker-main.ts';
import { coinFlow, deployActions, deployV1, deployV2, otherFlow } from './deploy-flows.ts';

const mode = process.argv[3];
const flows =
  mode === 'v1' ? [deployV1, coinFlow] : mode === 'v2' ? [deployV2, coinFlow] : mode === 'none' ? [otherFlow] : null;
if (!flows) throw new Error(`usage: versioned-worker.ts <database url> v1|v2|none (got ${mode})`);
await startChildPool({
  flows,
  actions: deployActions,
  // As the chaos workers: a SIGKILLed worker's jobs come back after 3 s and its Running steps are reclaimed.
  config: {
    worker: { poll_interval_ms: 50, lease_seconds: 3 },
    reclaim: { actions: { enabled: true, after_seconds: 3 }, compensations: { enabled: true, after_seconds: 3 } },
    logging: { anomaly_level: null },
  },
});
