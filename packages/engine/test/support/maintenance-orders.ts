import { defineAction, defineFlow } from '../../src/index.ts';
import type { openTestEngine } from './open-test-engine.ts';
import { waitFor } from './wait-for.ts';

/** The embedded-maintenance tests' workload: a two-step order, each run churning its rows and jobs. */
export const reserve = defineAction({ name: 'maint-reserve', run: async (n: number) => ({ reserved: n }) });
export const ship = defineAction({ name: 'maint-ship', run: async (n: number) => ({ shipped: n * 2 }) });
export const order = defineFlow({
  name: 'maint-order',
  version: 1,
  run: async (ctx, n: number) => {
    const { reserved } = await ctx.action(reserve, n).run();
    return ctx.action(ship, reserved).run();
  },
});

/** Starts orders `from` … `from + count - 1`, ten at a time, and waits for all to complete; returns their run ids. */
export async function runOrders(
  t: Awaited<ReturnType<typeof openTestEngine>>,
  from: number,
  count: number,
): Promise<string[]> {
  const ids: string[] = [];
  for (let n = from; n < from + count; n += 10) {
    const batch = Array.from({ length: Math.min(10, from + count - n) }, (_, i) => t.engine.startFlow(order, n + i));
    ids.push(...(await Promise.all(batch)).map((r) => r.runId));
  }
  await waitFor(
    `${count} orders to complete`,
    async () => {
      const [row] = await t.db.driver.query<{ done: number }>(
        `select count(*)::int as done from sagaflow.flow_runs where id = any($1::uuid[]) and status = 'Completed'`,
        [ids],
      );
      return row?.done === count ? true : undefined;
    },
    120_000,
  );
  return ids;
}
