// The host of an-action-outliving-the-drain.test.ts: the README's shutdown with an action still running
// past the drain. It runs one flow whose action waits on a gate, stops its workers with a 200 ms drain
// bound (not drained: the action is in flight), closes its database, says `closed`, and only then lets
// the action finish (as a slow HTTP call would). Nothing here calls process.exit: whatever the engine
// left behind keeps the process alive. stdout: one JSON line per moment, and the engine's log at warn
// and above (pino's JSON lines), so the parent can count what was logged after the close.
import { pino } from 'pino';
import { createDatabase, createEngine, defineAction, defineFlow } from '../../../../src/index.ts';

const [kind, where] = process.argv.slice(2);
if ((kind !== 'pglite' && kind !== 'postgres') || !where)
  throw new Error('usage: outliving-drain-host.ts pglite <dataDir> | postgres <url>');
const say = (o: object) => process.stdout.write(`${JSON.stringify({ host: true, ...o })}\n`);

let release!: () => void;
const gate = new Promise<void>((r) => (release = r));
let started!: () => void;
const inAction = new Promise<void>((r) => (started = r));
const slow = defineAction({
  name: 'fix52.slow',
  run: async () => {
    started();
    await gate;
    return { ok: 1 };
  },
});
const flow = defineFlow({
  name: 'fix52.slow-flow',
  version: 1,
  run: async (ctx) => {
    await ctx.action(slow, {});
    return 'done';
  },
});

const db =
  kind === 'postgres'
    ? await createDatabase({ kind: 'postgres', url: where, poolSize: 4 })
    : await createDatabase({ kind: 'pglite', dataDir: where });
const engine = createEngine({ db, flows: [flow], actions: [slow], logger: pino({ level: 'warn' }) });
engine.startWorkers();
const { runId } = await engine.startFlow(flow, {});
await inAction;
const stopped = await engine.stopWorkers(200);
await db.close();
say({ at: 'closed', runId, drained: stopped.drained });
release();
