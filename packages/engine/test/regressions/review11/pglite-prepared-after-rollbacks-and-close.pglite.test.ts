import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';

/**
 * ADR 0055: on PGlite a raw statement is prepared by name the first time its text is sent, its
 * parameter types kept per instance, and only bound and executed after. PGlite has one session and
 * nothing renames a statement the session lost, so a statement whose preparation did not outlive
 * the transaction it happened in would fail every later time: every run of that kind stuck. And a
 * statement sent while the instance closes must settle, never run on a backend being torn down.
 */
describe('PGlite prepared statements after rollbacks, refusals and close', () => {
  let db: Database;
  beforeAll(async () => {
    db = await createDatabase({ kind: 'pglite' });
    await db.driver.exec('create table review11_probe (id uuid primary key, note text)');
  });
  afterAll(async () => {
    await db.close();
  });

  const preparedCount = async (text: string) =>
    (
      await db.driver.query<{ n: number }>(
        'select count(*)::int as n from pg_prepared_statements where statement = $1',
        [text],
      )
    )[0]?.n;
  const id = '6f1c3a52-2a0b-4c3e-9d7e-0b5c1e2f3a4b';

  it('one first prepared in a transaction that rolled back still serves autocommitted and transactional sends', async () => {
    const insert = `/* review11: prepared then rolled back */ insert into review11_probe (id, note) values ($1::uuid, $2) returning note`;
    await expect(
      db.driver.transaction(async (tx) => {
        expect((await tx.raw({ text: insert, values: [id, 'gone'] })).rows).toEqual([{ note: 'gone' }]);
        throw new Error('rolled back on purpose');
      }),
    ).rejects.toThrow('rolled back on purpose');
    expect(await db.driver.query('select * from review11_probe')).toEqual([]);
    expect((await db.driver.statement({ text: insert, values: [id, 'kept'] })).rows).toEqual([{ note: 'kept' }]);
    const again = await db.driver.transaction(async (tx) => {
      await tx.exec(`delete from review11_probe`);
      return tx.raw({ text: insert, values: [id, 'kept'] });
    });
    expect(again.rows).toEqual([{ note: 'kept' }]);
    expect(await preparedCount(insert)).toBe(1);
  });

  it('one whose first bind the server refused inside a transaction serves the next send', async () => {
    const read = `/* review11: refused first */ select note from review11_probe where id = $1::uuid`;
    await expect(db.driver.transaction((tx) => tx.raw({ text: read, values: ['not-a-uuid'] }))).rejects.toMatchObject({
      code: '22P02',
    });
    expect((await db.driver.statement({ text: read, values: [id] })).rows).toEqual([{ note: 'kept' }]);
    // The refusal left no transaction open: a write now commits on its own, seen by Prisma's queries.
    await db.driver.statement({
      text: `update review11_probe set note = $2 where id = $1::uuid`,
      values: [id, 'after'],
    });
    expect(await db.prisma.$queryRawUnsafe('select note from review11_probe')).toEqual([{ note: 'after' }]);
  });

  it('statements sent around close() settle: those queued before it run, later ones run whole or are refused', async () => {
    const closing = await createDatabase({ kind: 'pglite' });
    const text = `/* review11: around close */ select $1::int * 2 as n`;
    await closing.driver.statement({ text, values: [0] });
    const before = [1, 2, 3].map((n) => closing.driver.statement({ text, values: [n] }));
    // One turn: the three are past the engine's yield (ADR 0050) and queued on PGlite's locks.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const closed = closing.close();
    const after = [4, 5].map((n) => closing.driver.statement({ text, values: [n] }));
    const settled = await Promise.allSettled([...before, ...after]);
    await closed;
    const seen = settled.map((s) => (s.status === 'fulfilled' ? s.value.rows : String(s.reason)));
    // Queued before close() took PGlite's locks: they run first, with their own rows.
    expect(seen.slice(0, 3)).toEqual([[{ n: 2 }], [{ n: 4 }], [{ n: 6 }]]);
    // Sent once close() was under way: never run on a backend being torn down, only refused (or run whole).
    seen.slice(3).forEach((rows, i) => {
      if (typeof rows === 'string') expect(rows).toMatch(/PGlite is clos(ed|ing)/);
      else expect(rows).toEqual([{ n: 2 * (4 + i) }]);
    });
  });

  it('a statement sent while close() waits behind an open transaction is refused, not run on the closing backend', async () => {
    const closing = await createDatabase({ kind: 'pglite' });
    const text = `/* review11: behind a closing wait */ select $1::int * 2 as n`;
    await closing.driver.statement({ text, values: [0] });
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let began: () => void = () => undefined;
    const open = new Promise<void>((resolve) => (began = resolve));
    const tx = closing.driver.transaction(async (t) => {
      await t.raw({ text, values: [1] });
      began();
      await held;
      return t.raw({ text, values: [2] });
    });
    await open;
    // close() queues behind the transaction; the statement queues behind close().
    const closed = closing.close();
    await new Promise<void>((resolve) => setImmediate(resolve));
    const late = closing.driver.statement({ text, values: [3] });
    await new Promise<void>((resolve) => setImmediate(resolve));
    release();
    expect((await tx).rows).toEqual([{ n: 4 }]);
    await closed;
    await expect(late).rejects.toThrow(/PGlite is clos(ed|ing)/);
  });
});
