// The host process of a-host-exits-once-its-engine-is-stopped.pg.test.ts: an engine with its pool and its
// monitor on the database URL in argv[2] runs a few one-step flows to their end, stops its monitor and its
// workers (a drain bound of an hour), closes its database, says `stopped`, and leaves the process to end by
// itself: nothing here calls process.exit, so whatever the engine left behind keeps it alive.
import { pino } from 'pino';
import { createDatabase, createEngine, defineAction, defineFlow } from '../../src/index.ts';

const url = process.argv[2];
if (!url) throw new Error('usage: stopping-host.ts <database url>');
const step = defineAction({ name: 'stopping-host-step', run: async (n: number) => n + 1 });
const flow = defineFlow({
  name: 'stopping-host-flow',
  version: 1,
  run: async (ctx, n: number) => ctx.action(step, n),
});
const db = await createDatabase({ kind: 'postgres', url, poolSize: 4 });
const engine = createEngine({ db, flows: [flow], actions: [step], logger: pino({ level: 'silent' }) });
const finished = new Map<string, string>();
engine.events.on('run.finished', ({ runId, status }) => void finished.set(runId, status));
engine.startWorkers();
engine.startMonitor();
const ids: string[] = [];
for (let n = 0; n < 5; n++) ids.push((await engine.startFlow(flow, n)).runId);
while (!ids.every((id) => finished.has(id))) await new Promise((r) => setTimeout(r, 20));
await engine.stopMonitor();
const { drained } = await engine.stopWorkers(3_600_000);
await db.close();
process.stdout.write(`stopped ${drained} ${ids.map((id) => finished.get(id)).join(',')}\n`);
