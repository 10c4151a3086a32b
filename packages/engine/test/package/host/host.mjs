// A service outside the workspace, in plain JavaScript: it installed the packed engine with npm and
// runs it with plain node. It migrates, runs one order to Completed and one to Compensated, and
// stops without process.exit, so a handle left open would keep it alive and fail the test.
// Usage: node host.mjs pglite | node host.mjs postgres <url>
import { createDatabase, createEngine, defineAction, defineFlow, migrate } from '@sagaflow/engine';
import { pino } from 'pino';

const [kind, url] = process.argv.slice(2);
const db = await createDatabase(kind === 'postgres' ? { kind, url } : { kind: 'pglite' });
const migrated = await migrate(db);

const undone = [];
const reserve = defineAction({ name: 'reserve-stock', run: async (i) => ({ reservation: `r-${i.orderId}` }) });
const release = defineAction({
  name: 'release-stock',
  run: async (i) => {
    undone.push(i.reservation);
    return { released: i.reservation };
  },
});
const charge = defineAction({
  name: 'charge-card',
  retry: { maxAttempts: 1 },
  run: async (i) => {
    if (i.declined) throw new Error('card declined');
    return { charge: `c-${i.orderId}` };
  },
});
const order = defineFlow({
  name: 'place-order',
  version: 1,
  run: async (ctx, input) => {
    try {
      const stock = await ctx
        .action(reserve, { orderId: input.orderId })
        .compensateWith(release, (o) => ({ reservation: o.reservation }));
      const paid = await ctx.action(charge, input);
      return { ...stock, ...paid };
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

const engine = createEngine({
  db,
  flows: [order],
  actions: [reserve, release, charge],
  logger: pino({ level: 'warn' }),
  config: { worker: { poll_interval_ms: 20 } },
});
engine.startWorkers();

async function settle(runId) {
  for (;;) {
    const detail = await engine.getRun(runId);
    if (detail && ['Completed', 'Compensated', 'Failed', 'Expired', 'TimedOut'].includes(detail.run.status))
      return detail.run;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const ok = await engine.startFlow(order, { orderId: 'o-1', declined: false });
const declined = await engine.startFlow(order, { orderId: 'o-2', declined: true });
const [a, b] = [await settle(ok.runId), await settle(declined.runId)];
await engine.stopWorkers();
await db.close();
console.log(
  JSON.stringify({
    migrations: migrated.applied.length + migrated.alreadyApplied,
    completed: { status: a.status, output: a.output },
    compensated: { status: b.status },
    undone,
  }),
);
