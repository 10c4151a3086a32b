import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertStorableJson, type JsonRules } from '../../../src/input/assert-storable-json.ts';
import { assertStorableJsonBefore0058 } from './assert-storable-json-before-0058.ts';

/**
 * ADR 0058 reviewed (ADR 0061): the JSON check's fast path for plain ASCII text must refuse exactly
 * what the check refused before it, with the same message and field, and size what it accepts to the
 * same byte, which is the byte length of the compact JSON text. Fuzzed against main's implementation
 * as it was, frozen beside this test.
 */

/** The characters every branch turns on: JSON's escapes, the ASCII edges, NUL, surrogates, multi-byte UTF-8. */
const edgeUnit = fc.constantFrom(
  'a',
  'Z',
  ' ',
  '~',
  '"',
  '\\',
  '/',
  '\u0000',
  '\u0001',
  '\n',
  '\u001f',
  '\u007f',
  '\u0080',
  'é',
  '€',
  '\u2028',
  '😀',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
  '\ufffd',
);
const text = fc.oneof(
  fc.string({ unit: edgeUnit, maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.string({ unit: 'grapheme-ascii', maxLength: 12 }),
  fc.string({ unit: fc.constantFrom('x', 'é', '"'), minLength: 20, maxLength: 120 }),
);

class Point {
  constructor(readonly x = 1) {}
}

/** Anything a caller might pass: JSON, and each kind of value JSON cannot hold exactly. */
const anyValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', maxDepth: 5 },
    fc.oneof(
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      fc.double(),
      text,
      // Made afresh each time: a cycle is made by writing into the value.
      fc
        .constantFrom<() => unknown>(
          () => undefined,
          () => 1n,
          () => Number.NaN,
          () => Number.POSITIVE_INFINITY,
          () => -0,
          () => Symbol('s'),
          () => () => 1,
          () => new Date(0),
          () => new Map(),
          () => new Point(),
          () => Buffer.from('x'),
        )
        .map((make) => make()),
    ),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.sparseArray(tie('value'), { maxLength: 4 }),
    fc.dictionary(text, tie('value'), { maxKeys: 4 }),
    fc.dictionary(text, tie('value'), { maxKeys: 3 }).map((o) => Object.assign(Object.create(null) as object, o)),
    fc.dictionary(text, tie('value'), { maxKeys: 2 }).map((o) => ({ ...o, [Symbol('k')]: 1 })),
  ),
})).value;

/** A value, sometimes holding itself (a cycle) or one object twice side by side (not a cycle). */
const withReferences = fc.tuple(anyValue, fc.constantFrom('none', 'cycle', 'shared')).map(([v, how]) => {
  if (how === 'none' || typeof v !== 'object' || v === null) return v;
  if (how === 'shared') return { a: v, b: [v] };
  let inner: object = v;
  for (;;) {
    const next = Object.values(inner).find((c): c is object => typeof c === 'object' && c !== null);
    if (!next) break;
    inner = next;
  }
  Object.assign(inner, { back: v });
  return v;
});

const rulesArb: fc.Arbitrary<JsonRules> = fc.record({
  maxBytes: fc.oneof(fc.integer({ min: 0, max: 300 }), fc.constant(1_048_576)),
  maxDepth: fc.integer({ min: 0, max: 6 }),
  setting: fc.constant('limits.test_bytes'),
});

const outcome = (check: (v: unknown, field: string, rules: JsonRules) => number, v: unknown, rules: JsonRules) => {
  try {
    return { bytes: check(v, 'input', rules) };
  } catch (err) {
    const e = err as { name?: string; code?: string; message?: string; field?: string };
    return { name: e.name, code: e.code, message: e.message, field: e.field };
  }
};

describe('assertStorableJson after ADR 0058 against the check before it (review 12)', () => {
  it('refuses the same values with the same message and field, and sizes the rest to the same byte', () => {
    fc.assert(
      fc.property(withReferences, rulesArb, (v, rules) => {
        expect(outcome(assertStorableJson, v, rules)).toEqual(outcome(assertStorableJsonBefore0058, v, rules));
      }),
      { numRuns: 20_000 },
    );
  });

  it('an accepted value measures the byte length of its compact JSON', () => {
    const rules = { maxBytes: 1_048_576, maxDepth: 64, setting: 'limits.test_bytes' };
    fc.assert(
      fc.property(withReferences, (v) => {
        const got = outcome(assertStorableJson, v, rules);
        if ('bytes' in got) expect(got.bytes).toBe(Buffer.byteLength(JSON.stringify(v)));
      }),
      { numRuns: 5_000 },
    );
  });
});
