// The test kit as a user's node test uses it: a flow with a day's sleep, a signal timeout, a child
// flow with an hour's sleep, and one that compensates; then a typo'd run id. Prints one JSON line.
import { defineAction, defineFlow } from '@sagaflow/engine';
import { createTestEngine } from '@sagaflow/engine/testing';
import { z } from 'zod';
const undone = [];
const book = defineAction({ name: 'book', run: async (i) => ({ id: `b-${i.n}` }) });
const unbook = defineAction({
  name: 'unbook',
  run: async (i) => {
    undone.push(i.id);
    return { ok: true };
  },
});
const boom = defineAction({
  name: 'boom',
  run: async () => {
    throw new Error('boom');
  },
});
const child = defineFlow({
  name: 'child',
  version: 1,
  input: z.object({ n: z.number() }),
  run: async (ctx, i) => {
    await ctx.sleep(3600);
    return { c: i.n };
  },
});
const trip = defineFlow({
  name: 'trip',
  version: 1,
  input: z.object({ n: z.number() }),
  run: async (ctx, i) => {
    try {
      await ctx.action(book, { n: i.n }).compensateWith(unbook, (o) => ({ id: o.id }));
      await ctx.sleep(86_400);
      const s = await ctx.awaitSignal('go', { timeoutSeconds: 600 });
      const c = await ctx.child(child, { n: i.n });
      if (i.n < 0) await ctx.action(boom, {});
      return { s, c };
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});
const t = await createTestEngine({ flows: [trip, child], actions: [book, unbook, boom] });
const done = await t.runToCompletion(trip, { n: 1 });
const failed = await t.runToCompletion(trip, { n: -1 });
let typo;
try {
  await t.drive('not-a-run');
  typo = { resolved: true };
} catch (e) {
  typo = { class: e.constructor.name, code: e.code ?? null, message: String(e.message).slice(0, 300) };
}
await t.close();
console.log(
  JSON.stringify({
    done: { status: done.run.status, output: done.run.output },
    failed: failed.run.status,
    undone,
    typo,
  }),
);
