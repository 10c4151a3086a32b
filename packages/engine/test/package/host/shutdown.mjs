// The README's shutdown: stopWorkers(ms), then db.close(), with an action still running past the drain.
// Prints one JSON line per moment; the parent measures how long the process lives after db.close().
import { createDatabase, createEngine, migrate, defineAction, defineFlow } from '@sagaflow/engine';
import { pino } from 'pino';
const say = (o) => console.log(JSON.stringify(o));
let release;
const gate = new Promise((r) => (release = r));
let started;
const inAction = new Promise((r) => (started = r));
const slow = defineAction({
  name: 'slow',
  run: async () => {
    started();
    await gate;
    return { ok: 1 };
  },
});
const flow = defineFlow({
  name: 'slow-flow',
  version: 1,
  run: async (ctx) => {
    await ctx.action(slow, {});
    return 'done';
  },
});
const url = process.argv[2];
const db = url ? await createDatabase({ kind: 'postgres', url }) : await createDatabase({ kind: 'pglite' });
await migrate(db);
// warn and up to stderr, so stdout stays this script's JSON lines.
const logger = pino({ level: 'warn' }, pino.destination(2));
const engine = createEngine({ db, flows: [flow], actions: [slow], logger });
engine.startWorkers();
await engine.startFlow(flow, {});
await inAction;
const stopped = await engine.stopWorkers(200);
await db.close();
say({ at: 'closed', stopped });
// The action finishes after the host closed everything, as a slow HTTP call would.
release();
