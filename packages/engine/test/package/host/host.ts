// A TypeScript host type-checked (strict) against the .d.ts files the packed engine ships.
import {
  createDatabase,
  createEngine,
  defineAction,
  defineFlow,
  migrate,
  type Database,
  type Engine,
  type RunDetail,
} from '@sagaflow/engine';
import { createTestEngine, type TestEngine } from '@sagaflow/engine/testing';

const reserve = defineAction({
  name: 'reserve-stock',
  run: async (i: { orderId: string }) => ({ reservation: `r-${i.orderId}` }),
});
const release = defineAction({
  name: 'release-stock',
  run: async (i: { reservation: string }) => ({ released: i.reservation }),
});
const order = defineFlow({
  name: 'place-order',
  version: 1,
  run: async (ctx, input: { orderId: string }) => {
    const stock = await ctx.action(reserve, input).compensateWith(release, (o) => ({ reservation: o.reservation }));
    const reservation: string = stock.reservation;
    return { reservation };
  },
});

export async function main(url: string): Promise<string> {
  const db: Database = await createDatabase({ kind: 'postgres', url });
  await migrate(db);
  const engine: Engine = createEngine({ db, flows: [order], actions: [reserve, release] });
  const { runId } = await engine.startFlow(order, { orderId: 'o-1' });
  const detail: RunDetail | null = await engine.getRun(runId);
  await db.close();
  return detail?.run.status ?? 'missing';
}

export async function inTests(): Promise<string> {
  const t: TestEngine = await createTestEngine({ flows: [order], actions: [reserve, release] });
  const done = await t.runToCompletion(order, { orderId: 'o-2' });
  await t.close();
  return done.run.status;
}
