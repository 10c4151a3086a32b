// The operator process of a-terminate-repair-stopped-between-batches.pg.test.ts: applies run.terminate
// (argv[4] its reason, argv[5] its key) to the root in argv[3], against the database URL in argv[2],
// with the repair's transaction limited to 5 s as the test's own engine. Once the first batch of
// descendants has committed (the 100th descendant's `run.finished`, emitted after that batch's commit
// and before the next batch begins), it prints `stopped after 100` and goes no further, to be SIGKILLed:
// a control plane that dies between two batches.
import { pino } from 'pino';
import { createDatabase, createEngine } from '../../../../src/index.ts';
import { wideTreeFlows } from './wide-tree.ts';

const [url, rootId, reason, key] = process.argv.slice(2);
if (!url || !rootId || !reason || !key)
  throw new Error('usage: terminate-repair-operator.ts <database url> <root id> <reason> <key>');
const db = await createDatabase({ kind: 'postgres', url, poolSize: 2 });
const engine = createEngine({
  db,
  flows: wideTreeFlows,
  actions: [],
  config: { logging: { anomaly_level: null }, processes: { transaction_timeout_ms: 5000 } },
  logger: pino({ level: 'silent' }),
});
let ended = 0;
engine.events.on('run.finished', async (ev) => {
  if (ev.runId === rootId) return;
  ended += 1;
  if (ended < 100) return;
  process.stdout.write(`stopped after ${ended}\n`);
  await new Promise<never>(() => undefined);
});
process.stdout.write(`ready ${engine.runtime.workerId}\n`);
await engine.repairs
  .apply({
    kind: 'run.terminate',
    target: { runId: rootId },
    expected: { runStatus: 'Waiting' },
    actor: 'ana@example.test',
    reason,
    idempotencyKey: key,
  })
  .then(
    (answer) => process.stdout.write(`answered ${answer.status}\n`),
    (err: unknown) => process.stdout.write(`failed ${String(err).replace(/\s+/g, ' ').slice(0, 300)}\n`),
  );
