import type pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../../src/create-engine.ts';
import type { Database } from '../../../src/db/database.ts';
import { inRunTransaction } from '../../../src/runtime/in-run-transaction.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

const logged: string[] = [];
const logger = pino({ level: 'warn' }, { write: (line: string) => void logged.push(line) });
const gaveUp = () => logged.some((l) => l.includes('no database connection for a run transaction'));

/**
 * Review of ADR 0037 decision 3 with its default wait. The engine's pg pool gives up on a connection
 * after 5 s (connectionTimeoutMillis), before `worker.transaction_wait_ms` (10 s by default) runs out:
 * on PostgreSQL with the defaults it is node-postgres's "timeout exceeded when trying to connect",
 * not Prisma's P2028, that reaches the run transaction. It must be started again too.
 */
describe('a run transaction whose pool gave no connection within its own timeout starts again', () => {
  let db: Database;
  let engine: Engine;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 1 });
    engine = createEngine({ db, flows: [], actions: [], logger, config: { logging: { anomaly_level: null } } });
  });
  afterAll(async () => {
    await db.close();
  });

  it('the pool timeout is retried with the default wait, and the work runs once', async () => {
    expect(engine.config.worker.transaction_wait_ms).toBeGreaterThan(5_000);
    const client: pg.PoolClient = await db.pool!.connect();
    let runs = 0;
    const tx = inRunTransaction(engine.runtime, async (t) => {
      runs += 1;
      return t.$queryRaw<{ one: number }[]>`select 1 as one`;
    });
    let failed: unknown = null;
    tx.catch((err: unknown) => (failed = err));
    await waitFor('the pool to give up once', async () => (gaveUp() || failed !== null ? true : undefined), 30_000);
    client.release();
    expect(failed).toBeNull();
    expect(await tx).toEqual([{ one: 1 }]);
    expect(runs).toBe(1);
  }, 60_000);
});
