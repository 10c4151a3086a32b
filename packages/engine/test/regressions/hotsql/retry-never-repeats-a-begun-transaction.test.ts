import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../../src/create-engine.ts';
import type { Database } from '../../../src/db/database.ts';
import { inRunTransaction } from '../../../src/runtime/in-run-transaction.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { gate } from '../harness.ts';

const logged: string[] = [];
const logger = pino({ level: 'warn' }, { write: (line: string) => void logged.push(line) });
const gaveUp = () => logged.filter((l) => l.includes('no database connection for a run transaction')).length;

/**
 * Review of ADR 0037 decision 3. A run transaction whose wait for a connection ran out (Prisma's P2028
 * "Unable to start a transaction in the given time") is started again. Prisma's wait can run out while
 * the driver is still starting it: the abandoned start then gets the connection later, and BEGIN goes
 * out on it. The retry is only safe if that abandoned transaction never runs the work and is rolled
 * back, giving its connection back: the only connection, on a pool of one or on PGlite.
 */
describe(`a retried run transaction runs its work once, and the start it gave up on holds nothing (${testDbKind()})`, () => {
  let db: Database;
  let engine: Engine;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 1 });
    await db.driver.exec('create table public.review_marker (n int not null)');
    engine = createEngine({
      db,
      flows: [],
      actions: [],
      logger,
      config: { worker: { transaction_wait_ms: 50 }, logging: { anomaly_level: null } },
    });
  });
  afterAll(async () => {
    await db.close();
  });

  it('the work runs once, one row is written, and the connection is free afterwards', async () => {
    // Take the only connection: the pool's one client, or PGlite's transaction (its one session).
    const release = gate();
    const holding = gate();
    const held = db.pool
      ? db.pool.connect().then(async (client) => {
          holding.open();
          await release.promise;
          client.release();
        })
      : db.driver.transaction(async () => {
          holding.open();
          await release.promise;
        });
    await holding.promise;
    let runs = 0;
    const tx = inRunTransaction(engine.runtime, async (t) => {
      runs += 1;
      await t.$executeRaw`insert into public.review_marker (n) values (${runs}::int)`;
      return runs;
    });
    // Several starts given up on, each one's start still queued for the connection behind it.
    await waitFor('three starts to give up waiting', async () => (gaveUp() >= 3 ? true : undefined));
    release.open();
    await held;
    expect(await tx).toBe(1);
    expect(runs).toBe(1);
    const rows = await db.driver.query<{ n: number }>('select n from public.review_marker');
    expect(rows).toEqual([{ n: 1 }]);
    // Every abandoned start was rolled back: no session is left inside a transaction.
    if (db.pool) {
      const idle = await db.driver.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity
          where datname = current_database() and state like 'idle in transaction%'`,
      );
      expect(idle).toEqual([{ n: 0 }]);
    }
    // And the connection serves the next transaction at once.
    expect(
      await engine.runtime.prisma.$transaction(async (t) => t.$queryRaw<{ one: number }[]>`select 1 as one`),
    ).toEqual([{ one: 1 }]);
  });
});
