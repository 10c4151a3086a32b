import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createEngine, type Engine } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';

/**
 * Review 58 (ADR 0132 §2, ADR 0028). Besides `deliver`, the one engine call that takes `{ tx }` is
 * `startFlow`. Attacked: does a start in the host's transaction change the host's `statement_timeout` /
 * `lock_timeout`, and does the run commit if and only if the host's transaction does?
 */
describe("review 58: a start in the host's own transaction (real PostgreSQL)", () => {
  let db: Database & { url?: string };
  let engine: Engine;
  let host: pg.Client;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 4 });
    engine = createEngine({
      db,
      flows: [waiter],
      actions,
      config: { processes: { transaction_timeout_ms: 1_000 }, logging: { anomaly_level: null } },
      logger: pino({ level: 'silent' }),
    });
    host = new pg.Client({ connectionString: db.url });
    await host.connect();
  });
  afterAll(async () => {
    await host?.end();
    await db?.close();
  });

  const settings = async () =>
    (
      await host.query<{ s: string; l: string }>(
        "select current_setting('statement_timeout') as s, current_setting('lock_timeout') as l",
      )
    ).rows[0];

  it("the host's limits are its own after startFlow(…, { tx }), and its commit or rollback decides the run", async () => {
    await host.query('begin');
    await host.query(`set local statement_timeout = '5min'`);
    await host.query(`set local lock_timeout = '2min'`);
    const kept = await engine.startFlow(waiter, null, { tx: host });
    const afterStart = await settings();
    const report = await host.query('select pg_sleep(1.2)').then(
      () => 'ran',
      (e: unknown) => `cancelled: ${(e as Error).message}`,
    );
    const commit = (await host.query('commit')).command;
    expect({ ...afterStart, report, commit }).toEqual({ s: '5min', l: '2min', report: 'ran', commit: 'COMMIT' });
    expect(await db.prisma.flowRun.count({ where: { id: kept.runId } })).toBe(1);

    await host.query('begin');
    const dropped = await engine.startFlow(waiter, null, { tx: host });
    await host.query('rollback');
    expect(await db.prisma.flowRun.count({ where: { id: dropped.runId } })).toBe(0);
    expect(await db.prisma.job.count({ where: { run_id: dropped.runId } })).toBe(0);
  }, 30_000);
});
