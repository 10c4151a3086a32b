// The operator process of terminate-and-die-before-the-children.pg.test.ts: applies run.terminate to
// the parent run in argv[3] against the database URL in argv[2]. Once the parent's terminal
// transition has committed (its `run.finished` event, emitted before the children are reached), it
// prints `committed` and stops there, to be SIGKILLed: a control plane that dies in that window.
import { pino } from 'pino';
import { createDatabase, createEngine } from '../../../../src/index.ts';
import { terminateTreeFlows } from './terminate-tree-flows.ts';

const [url, runId] = [process.argv[2], process.argv[3]];
if (!url || !runId) throw new Error('usage: terminate-operator.ts <database url> <run id>');
const { parent, child, actions } = terminateTreeFlows(() => new Promise<never>(() => undefined));
const db = await createDatabase({ kind: 'postgres', url, poolSize: 2 });
const engine = createEngine({
  db,
  flows: [parent, child],
  actions,
  config: { logging: { anomaly_level: null } },
  logger: pino({ level: 'silent' }),
});
engine.events.on('run.finished', async (ev) => {
  if (ev.runId !== runId) return;
  process.stdout.write(`committed ${ev.status}\n`);
  await new Promise<never>(() => undefined);
});
process.stdout.write(`ready ${engine.runtime.workerId}\n`);
const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
await engine.repairs.apply({
  kind: 'run.terminate',
  target: { runId },
  expected: { runStatus: run.status as 'Waiting' },
  actor: 'review20@example.test',
  reason: 'review20: stop the whole tree',
  idempotencyKey: `review20-terminate-tree-${runId}`,
});
