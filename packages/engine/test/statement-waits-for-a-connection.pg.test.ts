import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.ts';
import { openTestDatabase } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';

const pidOf = { text: 'select pg_backend_pid() as pid', values: [] };
const backendOf = async (db: Database, waitMs?: number) =>
  ((await db.driver.statement(pidOf, { waitMs })).rows[0] as { pid: number }).pid;

/**
 * An autocommitted statement checks out its own pooled connection (ADR 0043), waiting at most
 * `waitMs` (worker.transaction_wait_ms) for it, and gives it back whatever happens: what any change
 * to how it checks out and sends must keep (ADR 0067 measured one). The pool here has ONE
 * connection, so every statement waits for it while the test holds it.
 */
describe('an autocommitted statement and its pooled connection', () => {
  let db: Database;
  let pool: pg.Pool;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 1 });
    pool = db.pool!;
  });
  afterAll(async () => {
    await db.close();
  });

  it('waits for a busy connection and runs once it is released within the wait', async () => {
    const held = await pool.connect();
    const waiting = db.driver.statement({ text: 'select 41 + 1 as answer', values: [] }, { waitMs: 5_000 });
    await waitFor('the statement to wait for the connection', async () => (pool.waitingCount === 1 ? true : undefined));
    held.release();
    expect((await waiting).rows).toEqual([{ answer: 42 }]);
    expect([pool.totalCount, pool.idleCount, pool.waitingCount]).toEqual([1, 1, 0]);
  });

  it("fails with the pool's words once waitMs passed, and the connection that came late goes back unused", async () => {
    const held = await pool.connect();
    const heldPid = (held as unknown as { processID: number }).processID;
    const began = performance.now();
    const err = await db.driver.statement(pidOf, { waitMs: 300 }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    const waited = performance.now() - began;
    expect(err?.message).toMatch(/^timeout exceeded when trying to connect/);
    expect(err?.message).toContain('300 ms');
    expect(waited).toBeGreaterThanOrEqual(290);
    // The given-up checkout is still queued in the pool: the released connection goes to it, and
    // from it straight back, never used and never destroyed.
    expect(pool.waitingCount).toBe(1);
    held.release();
    await waitFor('the late connection to come back', async () =>
      pool.idleCount === 1 && pool.waitingCount === 0 ? true : undefined,
    );
    expect(pool.totalCount).toBe(1);
    expect(await backendOf(db, 300)).toBe(heldPid);
  });

  it('a connection on which the statement failed is destroyed, one on which it succeeded is kept without a listener left on it', async () => {
    const first = await backendOf(db, 1_000);
    expect(await backendOf(db, 1_000)).toBe(first);
    const idle = await pool.connect();
    const listeners = idle.listenerCount('error');
    idle.release();
    for (let i = 0; i < 20; i += 1) await backendOf(db, 1_000);
    const again = await pool.connect();
    expect(again.listenerCount('error')).toBe(listeners);
    again.release();
    await expect(db.driver.statement({ text: 'select 1 / 0 as boom', values: [] }, { waitMs: 1_000 })).rejects.toThrow(
      /division by zero/,
    );
    expect(await backendOf(db, 1_000)).not.toBe(first);
  });

  it('a statement that cannot be sent gives its connection back', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(
      db.driver.statement({ text: 'select $1::jsonb as v', values: [cyclic] }, { waitMs: 1_000 }),
    ).rejects.toThrow();
    await waitFor('the connection to be back', async () =>
      pool.waitingCount === 0 && pool.idleCount === pool.totalCount ? true : undefined,
    );
    expect((await db.driver.statement({ text: 'select 7 as seven', values: [] }, { waitMs: 1_000 })).rows).toEqual([
      { seven: 7 },
    ]);
  });
});
