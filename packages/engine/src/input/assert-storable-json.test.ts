import { describe, expect, it } from 'vitest';
import { assertStorableJson } from './assert-storable-json.ts';
import { describeBadText } from './describe-bad-text.ts';

const rules = { maxBytes: 1000, maxDepth: 5, setting: 'limits.test_bytes' };
const refusal = (value: unknown) => {
  try {
    assertStorableJson(value, 'input', rules);
    return null;
  } catch (err) {
    return { message: (err as Error).message, field: (err as { field?: string }).field };
  }
};

describe('assertStorableJson', () => {
  it('accepts what JSON stores exactly, and returns its size in bytes of compact JSON', () => {
    const values: unknown[] = [
      null,
      true,
      0,
      -1.5e-7,
      'text with é and 😀',
      [],
      {},
      { a: [1, 'two', { three: null }], 'k y': false },
      Object.assign(Object.create(null) as object, { a: 1 }),
    ];
    for (const v of values) {
      expect(refusal(v)).toBeNull();
      expect(assertStorableJson(v, 'input', rules)).toBe(Buffer.byteLength(JSON.stringify(v)));
    }
  });

  it('counts the bytes of every kind of character as compact JSON writes it, in keys and in values', () => {
    // Each character JSON escapes (quote, backslash, the short and the \u forms of control
    // characters), the printable edges of ASCII, DEL, and 2-, 3- and 4-byte UTF-8.
    const texts = [
      '',
      ' ',
      '~',
      '"',
      '\\',
      '\b\f\n\r\t',
      '\u0001',
      '\u001f',
      '\u007f',
      'é',
      '€',
      '😀',
      'a"b\\c\u0002d',
    ];
    for (const t of texts) {
      for (const v of [t, { [t]: t }, [t, { k: t }]]) {
        expect(refusal(v)).toBeNull();
        expect(assertStorableJson(v, 'input', rules)).toBe(Buffer.byteLength(JSON.stringify(v)));
      }
    }
  });

  it.each([
    ['a BigInt', { a: 1n }, 'input.a', /BigInt/],
    ['NaN', [0, Number.NaN], 'input[1]', /NaN/],
    ['undefined as a property', { a: undefined }, 'input.a', /undefined/],
    ['undefined as the value', undefined, 'input', /undefined/],
    // eslint-disable-next-line no-sparse-arrays -- the hole is the point
    ['a hole in an array', [1, , 3], 'input[1]', /empty slot/],
    ['a Set', { s: new Set([1]) }, 'input.s', /Set, not a plain object/],
    ['Symbol keys', { [Symbol('k')]: 1 }, 'input', /Symbol keys/],
    ['a lone surrogate in a key with a space', { 'a \udc00': 1 }, 'input["a \\udc00"]', /lone UTF-16 surrogate/],
    ['one level too deep', { a: { b: { c: { d: { e: {} } } } } }, 'input.a.b.c.d.e', /nested more than 5/],
    ['too many bytes', { a: 'x'.repeat(995) }, 'input', /larger than 1000 bytes.*limits\.test_bytes/],
    ['too many bytes in one long string', 'x'.repeat(5000), 'input', /larger than 1000 bytes/],
  ])('refuses %s, naming the path', (_label, value, field, says) => {
    const r = refusal(value);
    expect(r?.field).toBe(field);
    expect(r?.message.startsWith(`${field}: `)).toBe(true);
    expect(r?.message).toMatch(says);
  });

  it('refuses a 50,000-deep value without a RangeError', () => {
    let v: unknown = 1;
    for (let i = 0; i < 50_000; i++) v = [v];
    expect(refusal(v)?.message).toMatch(/^input\[0\]\[0\]\[0\]\[0\]\[0\]: nested more than 5/);
  });

  it('accepts the same object twice when it is not its own ancestor (a DAG, not a cycle)', () => {
    const shared = { x: 1 };
    expect(refusal({ a: shared, b: [shared, shared] })).toBeNull();
  });

  it('a refusal message is itself storable text (bad characters are escaped in it)', () => {
    const r = refusal({ 'k\u0000\ud800': 1 });
    expect(r?.message).toContain('input["k\\u0000\\ud800"]');
    expect(describeBadText(r?.message ?? '')).toBeNull();
  });
});
