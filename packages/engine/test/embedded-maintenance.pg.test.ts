import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { order, reserve, runOrders, ship } from './support/maintenance-orders.ts';
import { openTestEngine } from './support/open-test-engine.ts';

/** The embedded maintenance serves PGlite only (ADR 0050); on PGlite: embedded-maintenance.pglite.test.ts. */
describe('embedded maintenance on PostgreSQL', () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({
      flows: [order],
      actions: [reserve, ship],
      config: { maintenance: { interval_ms: 20 } },
    });
    t.engine.startWorkers();
  });
  afterAll(async () => {
    await t.closeAll();
  });

  it('does not run: the server’s autovacuum owns the tables', async () => {
    await runOrders(t, 0, 100);
    expect(t.engine.maintenance.applies).toBe(false);
    expect(await t.engine.maintenance.pass()).toEqual({ tables: [], interrupted: false });
    expect(t.engine.maintenance.counters()).toEqual({ passes: 0, vacuums: 0, analyzes: 0 });
  }, 240_000);
});
