import pg from 'pg';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { rawDb, type RawDb } from '../../src/db/raw-db.ts';
import { pgSession, rawOn } from '../../src/db/run-in-transaction.ts';
import { lockOpenRun } from '../../src/store/lock-open-run.ts';
import { openTestDatabase } from './test-database.ts';
import { waitFor } from './wait-for.ts';

/** A PostgreSQL test database and a connection of the test's own that holds a run's row as a terminate or a repair does. */
export interface RunLockHolder {
  db: () => Database;
  /** Takes the run's row FOR UPDATE in a transaction left open. */
  holdTheRun: (runId: string) => Promise<void>;
  /**
   * Once a backend of the test database waits for a lock running a statement that contains `marker`
   * (progress, not time): `write` in the held transaction, then its commit.
   */
  commitOnceWaiting: (marker: string, write: (tx: RawDb) => Promise<void>) => Promise<void>;
  /** The run's history as `type` or `type#sequence`, oldest first. */
  history: (runId: string) => Promise<string[]>;
}

/** Opens the database and the holder's connection before the file's tests, and closes both after them. */
export function useRunLockHolder(): RunLockHolder {
  let db: Database | undefined;
  let holder: pg.Client | undefined;
  let holderDb: RawDb | undefined;
  beforeAll(async () => {
    const opened = await openTestDatabase();
    db = opened;
    holder = new pg.Client({ connectionString: opened.url });
    await holder.connect();
    const session = pgSession(
      (config) => holder!.query(config),
      (statement) => rawOn(holder!, statement),
    );
    holderDb = rawDb((statement) => session.raw(statement));
  });
  afterAll(async () => {
    await holder?.end();
    await db?.close();
  });
  const opened = () => {
    if (!db || !holder || !holderDb) throw new Error('the run lock holder is used before its beforeAll ran');
    return { db, holder, holderDb };
  };
  return {
    db: () => opened().db,
    holdTheRun: async (runId) => {
      const { holder, holderDb } = opened();
      await holder.query('BEGIN');
      expect(await lockOpenRun(holderDb, runId, 'update')).toBe(true);
    },
    commitOnceWaiting: async (marker, write) => {
      const { db, holder, holderDb } = opened();
      await waitFor(`a statement (${marker}) to wait for the run's lock`, async () => {
        const waiting = await db.prisma.$queryRaw<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
           where datname = current_database() and wait_event_type = 'Lock' and query like ${`%${marker}%`}`;
        return (waiting[0]?.n ?? 0) > 0 ? true : undefined;
      });
      await write(holderDb);
      await holder.query('COMMIT');
    },
    history: async (runId) => {
      const events = await opened().db.prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } });
      return events.map((e) => (e.sequence === null ? e.type : `${e.type}#${e.sequence}`));
    },
  };
}
