import { pino } from 'pino';
import { afterAll, beforeAll, expect } from 'vitest';
import { createEngine, defineAction, defineFlow, type Database, type Engine } from '../../../../src/index.ts';
import { openTestDatabase } from '../../../support/test-database.ts';
import { waitFor } from '../../../support/wait-for.ts';
import { gate } from '../../harness.ts';

/**
 * The same database, with the pool's LISTEN under the test's hand (PostgreSQL): `lose()` ends the
 * listener's connection on the server and holds its next LISTEN back until `retake()`, so a NOTIFY
 * sent in between reaches no one.
 */
export function losableListen(db: Database) {
  const listen = db.listen!.bind(db);
  let listens = 0;
  let hold: ReturnType<typeof gate> | null = null;
  const database: Database = {
    ...db,
    listen: async (channel, onNotify) => {
      listens += 1;
      if (hold) await hold.promise;
      return listen(channel, onNotify);
    },
  };
  return {
    database,
    /** Ends the LISTEN's connection and waits until the listener asks for another, held back. */
    async lose() {
      hold = gate();
      const before = listens;
      // The listener's connection may still be on its way (a pool claims before its LISTEN has taken
      // hold, and after retake() the next LISTEN takes a moment): end it once it is there.
      const killed = await waitFor("the listener's connection, to end it", async () => {
        const rows = await db.driver.query<{ ok: boolean }>(
          `select pg_terminate_backend(pid) as ok from pg_stat_activity
            where datname = current_database() and application_name = 'sagaflow-listener'`,
        );
        return rows.length > 0 ? rows : undefined;
      });
      expect(killed.map((k) => k.ok)).toEqual([true]);
      await waitFor('the listener to listen again', async () => (listens > before ? true : undefined));
    },
    /** Lets the held LISTEN go (it takes hold once the server answers). */
    retake() {
      hold?.open();
      hold = null;
    },
  };
}

/**
 * What the LISTEN tests of review 13 share, for one describe block: a flow of one step that counts its
 * runs by input in `ran` (and waits on `hold(n)` when that gives a promise); the test database; a pool
 * (`concurrency` slots, its poll a minute away, so only a NOTIFY or an owed look finds queued work) on
 * that database with its LISTEN under `listener` (and `wrap`ped, when given); and `other`, an engine on
 * the plain database that runs no pool: its starts go through the job table and its NOTIFY. After the
 * block: the LISTEN let go, `release` called, the pool stopped, the database closed.
 */
export function losableListenSuite(opts: {
  tag: string;
  concurrency: number;
  hold?: (n: number) => Promise<void> | undefined;
  wrap?: (db: Database, listening: Database) => Database;
  release?: () => void;
}) {
  const ran = new Map<number, number>();
  const step = defineAction({
    name: `review13-${opts.tag}-step`,
    run: async (n: number) => {
      ran.set(n, (ran.get(n) ?? 0) + 1);
      await opts.hold?.(n);
      return n;
    },
  });
  const flow = defineFlow({
    name: `review13-${opts.tag}`,
    version: 1,
    run: async (ctx, n: number) => ctx.action(step, n),
  });
  const s = {} as { db: Database; pool: Engine; other: Engine; listener: ReturnType<typeof losableListen> };
  beforeAll(async () => {
    s.db = await openTestDatabase();
    s.listener = losableListen(s.db);
    const make = (d: Database) =>
      createEngine({
        db: d,
        flows: [flow],
        actions: [step],
        logger: pino({ level: 'silent' }),
        config: { worker: { concurrency: opts.concurrency, poll_interval_ms: 60_000 } },
      });
    s.pool = make(opts.wrap ? opts.wrap(s.db, s.listener.database) : s.listener.database);
    s.other = make(s.db);
  });
  afterAll(async () => {
    s.listener.retake();
    opts.release?.();
    await s.pool.stopWorkers();
    await s.db.close();
  });
  return { flow, ran, suite: s };
}
