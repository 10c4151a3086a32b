import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../src/db/create-database.ts';
import type { Database } from '../src/db/database.ts';

/**
 * ADR 0055: on PGlite a raw statement is prepared by name once per instance and then only bound and
 * executed, as on each PostgreSQL connection; PGlite's `query` would parse and plan it every time.
 */
describe('raw statements on PGlite are prepared by name once', () => {
  let db: Database;
  beforeAll(async () => {
    db = await createDatabase({ kind: 'pglite' });
    await db.driver.exec('create table prepared_probe (id int primary key, note text)');
  });
  afterAll(async () => {
    await db.close();
  });

  const preparedCount = async (text: string) => {
    const [row] = await db.driver.query<{ n: number }>(
      'select count(*)::int as n from pg_prepared_statements where statement = $1',
      [text],
    );
    return row?.n;
  };

  it('sends the same text under one prepared name, outside and inside a transaction, with values and rows as before', async () => {
    const text = 'select $1::int + 1 as n, $2::jsonb as doc, $3::timestamptz as at, $4::bigint[] as big';
    const at = new Date('2026-12-02T07:00:00.123Z');
    const values = [41, JSON.stringify({ a: [1, 2] }), at, [1n, 2n]];
    const alone = await db.driver.statement({ text, values });
    const inTx = await db.driver.transaction((tx) => tx.raw({ text, values }));
    for (const result of [alone, inTx]) {
      expect(result.rows).toEqual([{ n: 42, doc: { a: [1, 2] }, at, big: [1n, 2n] }]);
    }
    expect(await preparedCount(text)).toBe(1);
  });

  it('counts the rows a prepared write changed, and a failed one rolls its transaction back', async () => {
    const insert = 'insert into prepared_probe (id, note) values ($1, $2)';
    expect((await db.driver.statement({ text: insert, values: [1, 'one'] })).rowCount).toBe(1);
    await expect(
      db.driver.transaction(async (tx) => {
        await tx.raw({ text: insert, values: [2, 'two'] });
        await tx.raw({ text: insert, values: [1, 'again'] });
      }),
    ).rejects.toMatchObject({ code: '23505' });
    const rows = await db.driver.query<{ id: number }>('select id from prepared_probe order by id');
    expect(rows).toEqual([{ id: 1 }]);
    expect(await preparedCount(insert)).toBe(1);
  });

  it('never lands inside another caller’s open transaction: an autocommitted statement waits for its commit', async () => {
    const count = 'select count(*)::int as n from prepared_probe where id = $1';
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let began: () => void = () => undefined;
    const open = new Promise<void>((resolve) => (began = resolve));
    const tx = db.driver.transaction(async (t) => {
      await t.raw({ text: 'insert into prepared_probe (id, note) values ($1, $2)', values: [3, 'three'] });
      began();
      await held;
      await t.raw({ text: 'delete from prepared_probe where id = $1', values: [3] });
    });
    await open;
    // Sent while the transaction is open: run inside it, it would see row 3, which never commits.
    const seen = db.driver.statement({ text: count, values: [3] });
    release();
    await tx;
    expect((await seen).rows).toEqual([{ n: 0 }]);
  });

  it('a statement prepared before its result changed shape fails once as retryable, then is prepared afresh', async () => {
    const text = 'select * from prepared_probe where id = $1';
    expect((await db.driver.statement({ text, values: [1] })).rows).toEqual([{ id: 1, note: 'one' }]);
    await db.driver.exec('alter table prepared_probe add column extra int');
    await expect(db.driver.statement({ text, values: [1] })).rejects.toMatchObject({ retryable: true });
    expect((await db.driver.statement({ text, values: [1] })).rows).toEqual([{ id: 1, note: 'one', extra: null }]);
  });
});
