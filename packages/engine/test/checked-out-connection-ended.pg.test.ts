import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Database } from '../src/db/database.ts';
import { openTestDatabase } from './support/test-database.ts';

/**
 * A server that ends a session (a restart, pg_terminate_backend) while one of the pool's connections is
 * checked out and idle sends it an error with no query to fail. node-postgres then emits 'error' on the
 * client, and with no listener that is an uncaught exception: the host process dies (seen once in CI, in
 * the control plane's readiness test, which stops the server under a running engine). Every connection
 * of the engine's pool keeps a listener for its whole life; the holder learns of the end from its next
 * statement, which fails, and releasing the connection with that error makes the pool drop it.
 */
describe('a session the server ends under a checked-out connection (PostgreSQL)', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 2 });
  });
  afterAll(async () => {
    await db?.close();
  });

  it('does not crash the process; the next statement on it fails, and the pool goes on with a new one', async () => {
    const pool = db.pool!;
    const client = await pool.connect();
    const pid = (client as unknown as { processID: number }).processID;
    const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
    const admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
    await admin.connect();
    try {
      await admin.query('select pg_terminate_backend($1)', [pid]);
    } finally {
      await admin.end();
    }
    await ended;
    await expect(client.query('select 1')).rejects.toThrow();
    client.release(true);
    const [row] = await db.driver.query<{ one: number }>('select 1 as one');
    expect(row?.one).toBe(1);
  });
});
