import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/index.ts';
import { rawOn } from '../src/db/run-in-transaction.ts';
import type pg from 'pg';
import { rawTextParser } from '../src/db/raw-values.ts';
import { openTestDatabase } from './support/test-database.ts';

/**
 * The raw path reads rows through a shape kept per prepared name (db/raw-query.ts) instead of
 * node-postgres's per-statement `addFields`: its rows must be exactly node-postgres's, on the first
 * run of a name and on every one after.
 */
describe('raw statements read through a kept row shape', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 2 });
  });
  afterAll(async () => {
    await db?.close();
  });

  const text = `select $1::int8 as n, null::text as gone, 'a' as dup, 'b' as dup, 'c' as late, null::text as late, $2::timestamptz as at,
      '{"x": [1, 2.5]}'::jsonb as doc, 1.50::numeric as price, array[1, 2]::int8[] as ids, 7 as plain
      from generate_series(1, $3::int)`;
  const values = [42n, new Date('2026-12-02T01:02:03.456Z'), 3];

  /** node-postgres's own reading with the same parsers, as the raw path read before it kept shapes. */
  const pgRawTypes = { getTypeParser: rawTextParser as unknown as typeof pg.types.getTypeParser };

  it('gives the rows node-postgres gives, the first time and every time after', async () => {
    const client = await db.pool!.connect();
    try {
      const theirs = await client.query({ text, values: ['42', '2026-12-02 01:02:03.456', 3], types: pgRawTypes });
      for (let run = 0; run < 3; run += 1) {
        const ours = await rawOn(client, { text, values });
        expect(ours.rowCount).toBe(3);
        expect(ours.rows).toEqual(theirs.rows);
        expect(ours.rows.map((row) => Object.keys(row as object))).toEqual(
          theirs.rows.map((row) => Object.keys(row as object)),
        );
        expect((ours.rows[0] as { n: unknown }).n).toBe(42n);
        expect((ours.rows[0] as { dup: unknown }).dup).toBe('b');
        // The last of two same-named columns wins even when it is NULL.
        expect((ours.rows[0] as { late: unknown }).late).toBeNull();
      }
    } finally {
      client.release();
    }
  });

  it('a statement the server refuses rejects, and the client serves the next one', async () => {
    const client = await db.pool!.connect();
    try {
      await expect(rawOn(client, { text: 'select 1 / $1::int as q', values: [0] })).rejects.toThrow(/division by zero/);
      expect((await rawOn(client, { text: 'select 1 / $1::int as q', values: [1] })).rows).toEqual([{ q: 1 }]);
    } finally {
      client.release();
    }
  });

  it('an update reports its row count and no rows', async () => {
    const client = await db.pool!.connect();
    try {
      await client.query('create temporary table raw_query_probe (id int)');
      await client.query('insert into raw_query_probe values (1), (2)');
      const updated = await rawOn(client, { text: 'update raw_query_probe set id = id + $1::int', values: [1] });
      expect(updated).toEqual({ rows: [], rowCount: 2 });
    } finally {
      client.release();
    }
  });

  /** How many RowDescriptions `client` receives while `work` runs. */
  const descriptions = async (client: pg.PoolClient, work: () => Promise<unknown>) => {
    const connection = (client as unknown as { connection: NodeJS.EventEmitter }).connection;
    let count = 0;
    const count1 = () => (count += 1);
    connection.on('rowDescription', count1);
    try {
      await work();
    } finally {
      connection.off('rowDescription', count1);
    }
    return count;
  };

  it('a statement a connection has described is sent there without a Describe, and gives the same rows (ADR 0053)', async () => {
    const probe = `select $1::int8 + 1 as next, 'x' as tag from generate_series(1, $2::int) /* describe-once */`;
    const [one, two] = [await db.pool!.connect(), await db.pool!.connect()];
    try {
      const runs: unknown[] = [];
      const send = (client: pg.PoolClient, n: bigint) => async () =>
        runs.push((await rawOn(client, { text: probe, values: [n, 2] })).rows);
      expect(await descriptions(one, send(one, 1n))).toBe(1);
      expect(await descriptions(one, send(one, 2n))).toBe(0);
      expect(await descriptions(one, send(one, 3n))).toBe(0);
      // Another connection describes it once itself.
      expect(await descriptions(two, send(two, 4n))).toBe(1);
      expect(await descriptions(two, send(two, 5n))).toBe(0);
      expect(runs).toEqual([1n, 2n, 3n, 4n, 5n].map((n) => [1, 2].map(() => ({ next: n + 1n, tag: 'x' }))));
      // A value node-postgres cannot map fails that statement alone; the connection serves the next.
      const unmappable = {
        toPostgres: () => {
          throw new Error('not mappable');
        },
      };
      await expect(rawOn(one, { text: probe, values: [unmappable, 1] })).rejects.toThrow(/not mappable/);
      expect((await rawOn(one, { text: probe, values: [6n, 1] })).rows).toEqual([{ next: 7n, tag: 'x' }]);
    } finally {
      one.release();
      two.release();
    }
  });
});
