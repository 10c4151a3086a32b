import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';

/**
 * ADR 0053: once a connection has described a named statement, it is sent there without a Describe
 * and its rows are read through the shape kept for that connection. A run transaction that rolls
 * back without a failed statement (a replay conflict, a stale view) hands its connection back to
 * the pool as it is, so the statement it prepared and described there must still be there, and read
 * right, when the next transaction or statement on that connection sends it bare. One connection in
 * the pool makes "the next" the same backend, checked by its pid.
 */
describe('a statement first described inside a transaction that rolled back', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 1 });
  });
  afterAll(async () => {
    await db?.close();
  });

  const text = `/* review11: described then rolled back */
    select $1::int + 1 as n, $2::text as note, pg_backend_pid() as pid`;

  it('is sent bare on that connection afterwards and read through the shape it described', async () => {
    let described: { pid: number } | undefined;
    await expect(
      db.driver.transaction(async (tx) => {
        const { rows } = await tx.raw({ text, values: [1, 'first'] });
        described = rows[0] as { pid: number };
        throw new Error('rolled back on purpose');
      }),
    ).rejects.toThrow('rolled back on purpose');
    expect(described).toMatchObject({ n: 2, note: 'first' });

    const alone = await db.driver.statement({ text, values: [41, 'alone'] });
    expect(alone).toEqual({ rows: [{ n: 42, note: 'alone', pid: described!.pid }], rowCount: 1 });

    const inTx = await db.driver.transaction((tx) => tx.raw({ text, values: [9, "it's"] }));
    expect(inTx.rows).toEqual([{ n: 10, note: "it's", pid: described!.pid }]);
  });
});
