import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createDatabase, type Database } from '../../src/index.ts';
import { roundOn } from '../../src/db/raw-round.ts';
import { rawOn } from '../../src/db/run-in-transaction.ts';
import { refusedByServer } from '../../src/db/refused-by-server.ts';
import { openTestDatabase } from '../support/test-database.ts';

/**
 * ADR 0066: `driver.statements` sends several statements in one round trip (Bind/Execute each, one
 * Sync) and the server runs them as ONE transaction: one xid, one commit; a refusal of any writes
 * none of them; each statement keeps its own prepared name on the connection.
 */
describe('a round of statements on PostgreSQL', () => {
  let db: Database & { url?: string };
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 2, statementRounds: true });
    await db.driver.exec(`create table if not exists round_probe (id int primary key, note text)`);
  });
  afterAll(async () => {
    await db.driver.exec(`drop table if exists round_probe`);
    await db?.close();
  });

  const insert = (id: number, note: string) => ({
    text: `/* round probe insert */ insert into round_probe (id, note) values ($1::int, $2::text) returning id, note, pg_current_xact_id()::text as xid`,
    values: [id, note],
  });
  const countRows = async () =>
    Number((await db.driver.query<{ n: string }>(`select count(*) as n from round_probe`))[0]!.n);

  it('is on unless the database handle turns it off: the hot path then sends each kind apart', async () => {
    expect(typeof db.driver.statements).toBe('function');
    const plain = await openTestDatabase({ poolSize: 1, statementRounds: false });
    try {
      expect('statements' in plain.driver).toBe(false);
    } finally {
      await plain.close();
    }
    const refused: unknown = await createDatabase({
      kind: 'postgres',
      url: db.url!,
      statementRounds: 'yes' as unknown as boolean,
    }).catch((err: unknown) => err);
    expect(refused).toMatchObject({ code: 'config_invalid' });
    expect(String((refused as Error).message)).toContain('statementRounds');
  });

  it('runs every statement in one transaction and answers each one its own rows', async () => {
    await db.driver.exec(`truncate round_probe`);
    const [a, b, c] = await db.driver.statements!([
      insert(1, 'a'),
      {
        text: `/* round probe select */ select id, note from round_probe where id <= $1::int order by id`,
        values: [5],
      },
      insert(2, 'b'),
    ]);
    expect(a!.rows).toEqual([expect.objectContaining({ id: 1, note: 'a' })]);
    // The second statement sees the first's row: one transaction, statements in order.
    expect(b!.rows).toEqual([{ id: 1, note: 'a' }]);
    expect(b!.rowCount).toBe(1);
    expect(c!.rows).toEqual([expect.objectContaining({ id: 2, note: 'b' })]);
    expect((a!.rows[0] as { xid: string }).xid).toBe((c!.rows[0] as { xid: string }).xid);
    expect(await countRows()).toBe(2);
  });

  it('writes every row of the round under one transaction id', async () => {
    await db.driver.exec(`truncate round_probe`);
    const client = await db.pool!.connect();
    try {
      await roundOn(client, [insert(10, 'x'), insert(11, 'y'), insert(12, 'z')]);
      const xmins = await client.query<{ xid: string }>(`select xmin::text as xid from round_probe order by id`);
      expect(xmins.rows).toHaveLength(3);
      expect(new Set(xmins.rows.map((r) => r.xid)).size).toBe(1);
    } finally {
      client.release();
    }
  });

  it('writes nothing of the round when one statement is refused, and the connection goes on', async () => {
    await db.driver.exec(`truncate round_probe`);
    const client = await db.pool!.connect();
    try {
      let err: unknown;
      await roundOn(client, [insert(20, 'first'), insert(21, 'second'), insert(20, 'duplicate')]).catch(
        (e: unknown) => (err = e),
      );
      expect(refusedByServer(err)).toBe(true);
      expect((err as { code?: string; roundIndex?: number }).code).toBe('23505');
      expect((err as { roundIndex?: number }).roundIndex).toBe(2);
      expect(await countRows()).toBe(0);
      // The names prepared before the refusal stay usable on this connection, alone and in a round.
      expect((await rawOn(client, insert(22, 'alone'))).rowCount).toBe(1);
      const again = await roundOn(client, [insert(23, 'a'), insert(24, 'b')]);
      expect(again.map((r) => r.rowCount)).toEqual([1, 1]);
      expect(await countRows()).toBe(3);
    } finally {
      client.release();
    }
  });

  it('a statement never prepared on the connection after a refused one is parsed when sent next', async () => {
    await db.driver.exec(`truncate round_probe`);
    const client: pg.PoolClient = await db.pool!.connect();
    try {
      const fresh = {
        text: `/* round probe fresh ${Date.now()} */ select $1::int as n`,
        values: [7],
      };
      await expect(roundOn(client, [insert(30, 'a'), insert(30, 'dup'), fresh])).rejects.toMatchObject({
        code: '23505',
      });
      expect((await roundOn(client, [fresh, insert(31, 'b')]))[0]!.rows).toEqual([{ n: 7 }]);
    } finally {
      client.release();
    }
  });
});
