import { createDatabase, createEngine, defineAction, defineFlow } from '@sagaflow/engine';
import { pino } from 'pino';
import { latencyFlowName, type FirstStep } from './notify-latency-flow.ts';

/**
 * The worker process of measure-notify-latency.ts: `notify-latency-worker.ts <url> <on|off> <poll ms>`.
 * An engine with a pool of 4 on its own connections, NOTIFY on or off; its flow's first step tells
 * the parent, over IPC, the wall-clock instant it began. Says `ready`, exits on `stop`.
 */
const [url, notifyArg, pollArg] = process.argv.slice(2);
if (!url || !process.send) throw new Error('usage: forked with <database url> <on|off> <poll ms>');
const send = process.send.bind(process);

const first = defineAction({
  name: 'latency.first',
  run: async (input: { key: string }) => {
    const message: FirstStep = { key: input.key, at: performance.timeOrigin + performance.now() };
    send(message);
    return 1;
  },
});
const flow = defineFlow({
  name: latencyFlowName,
  version: 1,
  run: async (ctx, input: { key: string }) => ctx.action(first, input),
});
const db = await createDatabase({ kind: 'postgres', url, poolSize: 8 });
const engine = createEngine({
  db,
  flows: [flow],
  actions: [first],
  logger: pino({ level: 'warn' }, pino.destination(2)),
  config: { worker: { concurrency: 4, notify: notifyArg === 'on', poll_interval_ms: Number(pollArg) } },
});
engine.startWorkers();
process.on('message', (message) => {
  if (message !== 'stop') return;
  void engine
    .stopWorkers(2_000)
    .then(() => db.close())
    .then(() => process.exit(0));
});
send('ready');
