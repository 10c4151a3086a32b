import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createEngine, type Engine } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { tallyProcess } from '../review54/support/tally-process.ts';

/**
 * Review 55 (ADR 0131 §3). A process transaction's first statement now sets `statement_timeout` and
 * `lock_timeout` with `set_config(..., true)`, "local to the transaction". `deliver(..., { tx })` runs
 * that transaction as a savepoint of the HOST's open transaction; a setting made local inside a
 * released savepoint stays for the rest of the enclosing transaction. The host's own later statements
 * then run under the engine's limits (here 1 s and 500 ms) instead of the ones the host chose: a
 * host that set its own `statement_timeout` for a long report finds it replaced, and its statement is
 * cancelled, aborting its whole transaction (and the delivery in it). The guarantee a host expects of
 * "deliver in my transaction": the delivery commits iff my transaction does, and it changes nothing
 * else about my transaction.
 */
const TX_MS = 1_000;

describe("review 55: a delivery in the host's own transaction (real PostgreSQL)", () => {
  let db: Database & { url?: string };
  let engine: Engine;
  let host: pg.Client;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 4 });
    engine = createEngine({
      db,
      flows: [],
      actions: [],
      processes: [tallyProcess],
      config: { processes: { transaction_timeout_ms: TX_MS }, logging: { anomaly_level: null } },
      logger: pino({ level: 'silent' }),
    });
    host = new pg.Client({ connectionString: db.url });
    await host.connect();
  });
  afterAll(async () => {
    await host?.end();
    await db?.close();
  });

  it("the host transaction's statement_timeout and lock_timeout are its own after deliver(..., { tx })", async () => {
    await host.query('begin');
    await host.query(`set local statement_timeout = '5min'`);
    await host.query(`set local lock_timeout = '2min'`);
    const r = await engine.processes.deliver(
      tallyProcess,
      { id: randomUUID(), type: 'Begin', payload: { key: `k-${randomUUID()}` } },
      { tx: host },
    );
    expect(r.outcome).toBe('applied');
    const after = {
      statement_timeout: (await host.query<{ s: string }>("select current_setting('statement_timeout') as s")).rows[0]!
        .s,
      lock_timeout: (await host.query<{ s: string }>("select current_setting('lock_timeout') as s")).rows[0]!.s,
    };
    // What a host statement longer than the engine's limit (and within its own) then meets.
    const report = await host.query('select pg_sleep(1.5)').then(
      () => 'ran',
      (e: unknown) => `cancelled: ${(e as Error).message}`,
    );
    const commit = await host.query('commit').then(
      (x) => x.command,
      (e: unknown) => String(e),
    );
    expect({ ...after, report, commit }, 'the host set 5min / 2min in its transaction before it delivered').toEqual({
      statement_timeout: '5min',
      lock_timeout: '2min',
      report: 'ran',
      commit: 'COMMIT',
    });
  });
});
