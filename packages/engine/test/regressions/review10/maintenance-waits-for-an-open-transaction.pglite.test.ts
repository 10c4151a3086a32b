import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { gate } from '../harness.ts';

/**
 * ADR 0050's maintenance sends VACUUM through the same single PGlite session a run's transaction
 * holds. VACUUM refuses to run inside a transaction block, and anything sent into another caller's
 * open transaction would commit or roll back with it: the pass must wait for the transaction to end,
 * then vacuum, and the transaction's own writes must be exactly its own.
 */
describe('embedded maintenance while a transaction is open on PGlite', () => {
  let db: Database;
  let t: TestEngine;
  beforeAll(async () => {
    db = await openTestDatabase();
    t = await createTestEngine({ db, flows: [], actions: [] });
  });
  afterAll(async () => {
    await t.close();
    await db.close();
  });

  it('waits for the transaction to commit, then vacuums the table it wrote', async () => {
    // 300 dead row versions in anomaly_log: past autovacuum's threshold (50 + 20 % of the table).
    await db.driver.exec(
      `insert into sagaflow.anomaly_log (code, message) select 'review10', 'dead' from generate_series(1, 300);
       delete from sagaflow.anomaly_log where code = 'review10'`,
    );
    await waitFor('the dead row versions to be counted', async () => {
      const [row] = await db.driver.query<{ dead: number }>(
        `select n_dead_tup::int as dead from pg_stat_user_tables where schemaname = 'sagaflow' and relname = 'anomaly_log'`,
      );
      return (row?.dead ?? 0) >= 300 ? true : undefined;
    });

    const inside = gate();
    const release = gate();
    const held = db.driver.transaction(async (tx) => {
      await tx.exec(`insert into sagaflow.anomaly_log (code, message) values ('review10-held', 'inside')`);
      inside.open();
      await release.promise;
      await tx.exec(`insert into sagaflow.anomaly_log (code, message) values ('review10-held', 'inside, after')`);
    });
    await inside.promise;
    let settled = false;
    const pass = t.engine.maintenance.pass().finally(() => (settled = true));
    // Several turns of the event loop: a pass that did not wait would have been sent and answered.
    for (let i = 0; i < 20; i++) await nextTurn();
    expect(settled).toBe(false);
    release.open();
    await held;

    const done = await pass;
    expect(done.tables.find((x) => x.table === 'anomaly_log')).toMatchObject({ command: 'vacuum-analyze' });
    const rows = await db.driver.query<{ message: string }>(
      `select message from sagaflow.anomaly_log where code = 'review10-held' order by id`,
    );
    expect(rows.map((r) => r.message)).toEqual(['inside', 'inside, after']);
    const [stats] = await db.driver.query<{ vacuumed: boolean }>(
      `select last_vacuum is not null as vacuumed from pg_stat_user_tables where schemaname = 'sagaflow' and relname = 'anomaly_log'`,
    );
    expect(stats?.vacuumed).toBe(true);
  });
});
