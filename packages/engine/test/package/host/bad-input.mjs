// Bad input through the public API against PostgreSQL: each refusal's class, code, field and message,
// and the rows the engine's tables hold before and after.
import { createDatabase, createEngine, migrate, defineAction, defineFlow } from '@sagaflow/engine';
import { z } from 'zod';
import { pino } from 'pino';
const db = await createDatabase({ kind: 'postgres', url: process.argv[2] });
await migrate(db);
const a = defineAction({ name: 'a', run: async (i) => ({ n: i.n }) });
const order = defineFlow({
  name: 'order',
  version: 1,
  input: z.object({ orderId: z.string(), amount: z.number(), currency: z.string().default('EUR') }),
  signals: { approve: z.object({ by: z.string() }) },
  run: async (ctx, i) => {
    await ctx.action(a, { n: i.amount });
    return { currency: i.currency };
  },
});
const engine = createEngine({ db, flows: [order], actions: [a], logger: pino({ level: 'silent' }) });
engine.startWorkers();
const counts = async () => {
  const r = await db.pool.query(
    `select (select count(*) from sagaflow.flow_runs)::int as runs, (select count(*) from sagaflow.jobs)::int as jobs,
            (select count(*) from sagaflow.signals)::int as signals`,
  );
  return r.rows[0];
};
const first = await engine.startFlow(order, { orderId: 'o-1', amount: 1 }, { businessKey: 'o-1' });
for (let i = 0; i < 500; i++) {
  const d = await engine.getRun(first.runId);
  if (d.run.status === 'Completed') break;
  await new Promise((r) => setTimeout(r, 20));
}
const before = await counts();
const refusals = {};
const refuse = async (name, p) => {
  try {
    await p;
    refusals[name] = { accepted: true };
  } catch (e) {
    refusals[name] = {
      class: e.constructor.name,
      code: e.code ?? null,
      field: e.field ?? null,
      message: String(e.message),
    };
  }
};
await refuse('unknownFlow', engine.startFlow('no-such-flow', {}));
await refuse('invalidInput', engine.startFlow(order, { orderId: 'o-2', amount: 'lots' }));
await refuse('duplicateKey', engine.startFlow(order, { orderId: 'o-1', amount: 1 }, { businessKey: 'o-1' }));
await refuse('unknownRun', engine.signal('00000000-0000-4000-8000-000000000000', 'approve', { by: 'x' }));
await refuse('notUuid', engine.signal('not-a-run', 'approve', { by: 'x' }));
await refuse('finishedRun', engine.signal(first.runId, 'approve', { by: 'x' }));
await refuse('badPayload', engine.signal(first.runId, 'approve', { by: 7 }));
const after = await counts();
// ADR 0028: a start in the host's own pg transaction is a savepoint; the host's ROLLBACK takes it back.
const client = await db.pool.connect();
await client.query('BEGIN');
const rolledBack = await engine.startFlow(order, { orderId: 'o-rb', amount: 2 }, { tx: client, businessKey: 'o-rb' });
await client.query('ROLLBACK');
await client.query('BEGIN');
const committed = await engine.startFlow(order, { orderId: 'o-c', amount: 2 }, { tx: client, businessKey: 'o-c' });
await client.query('COMMIT');
client.release();
await refuse('notATransaction', engine.startFlow(order, { orderId: 'o-x', amount: 2 }, { tx: { begin: true } }));
for (let i = 0; i < 500; i++) {
  const d = await engine.getRun(committed.runId);
  if (d?.run.status === 'Completed') break;
  await new Promise((r) => setTimeout(r, 20));
}
const hostTx = {
  rolledBack: (await engine.getRun(rolledBack.runId)) === null,
  committed: (await engine.getRun(committed.runId))?.run.status ?? null,
  rowsWithKey: (
    await db.pool.query(
      `select business_key from sagaflow.flow_runs where business_key in ('o-rb', 'o-c', 'o-x') order by 1`,
    )
  ).rows.map((r) => r.business_key),
};
const stored = (await engine.getRun(first.runId)).run;
await engine.stopWorkers(5000);
await db.close();
console.log(JSON.stringify({ before, after, refusals, firstOutput: stored.output, hostTx }));
