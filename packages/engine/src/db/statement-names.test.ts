import { describe, expect, it } from 'vitest';
import { namedStatement, renameStatement } from './statement-names.ts';

/** A text built afresh from pieces, as Prisma.sql builds each statement's text per call. */
const built = (...pieces: string[]) => pieces.reduce((text, piece) => text + piece, '');

describe('namedStatement', () => {
  it('names a fresh copy of a known text as the first, and hands back the first copy', () => {
    const first = namedStatement(built('select ', '$1::int', ' as a'));
    const again = namedStatement(built('select $1', '::int as a'));
    expect(first?.name).toMatch(/^sf_/);
    expect(again).toBe(first);
    expect(again?.text).toBe('select $1::int as a');
  });

  it('never gives two different texts of the same length one name', () => {
    const a = namedStatement(built('select ', '$1::int', ' as b'));
    const b = namedStatement(built('select ', '$1::int', ' as c'));
    expect(a?.text.length).toBe(b?.text.length);
    expect(a?.name).not.toBe(b?.name);
  });

  it('renames a text for good, to a name no first name can take', () => {
    const named = namedStatement('select $1::int as d')!;
    const before = named.name;
    renameStatement(named);
    expect(named.name).toBe(`${before}_g1`);
    expect(namedStatement(built('select $1::int', ' as d'))?.name).toBe(`${before}_g1`);
  });

  it('leaves a text longer than 8000 characters unnamed', () => {
    expect(namedStatement(`select 1${' '.repeat(8_000)}`)).toBeUndefined();
  });
});
