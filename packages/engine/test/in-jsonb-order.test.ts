import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.ts';
import type { Json } from '../src/definitions/define-action.ts';
import { inJsonbOrder } from '../src/input/in-jsonb-order.ts';
import { openTestDatabase, testDbKind } from './support/test-database.ts';

/** Keys jsonb can store (no NUL), from every plane of Unicode, some of them numeric like array indexes. */
const key = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 6 }).filter((s) => !s.includes('\u0000')),
  fc.nat(300).map(String),
  fc.constantFrom('__proto__', 'a', 'b', 'ab', 'é', 'z'),
);
const json: fc.Arbitrary<Json> = fc.letrec<{ value: Json }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 4 })),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(key, tie('value'), { maxKeys: 8 }),
  ),
})).value;

describe(`an input in jsonb's key order is the input a jsonb column gives back (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('for every JSON value: the same keys in the same order at every depth', async () => {
    await fc.assert(
      fc.asyncProperty(json, async (value) => {
        const [row] = await db.driver.query<{ back: string }>('select $1::jsonb::text as back', [
          JSON.stringify(value),
        ]);
        // Compared as JSON text: JSON.stringify writes an object's keys in their order.
        expect(JSON.stringify(inJsonbOrder(value))).toBe(JSON.stringify(JSON.parse(row!.back)));
      }),
      { numRuns: 300 },
    );
  });

  it('orders by length in bytes before the bytes themselves, and keeps "__proto__" a key', async () => {
    const value = { zz: 1, é: 2, b: 3, aaa: 4, ab: 5, __proto__x: 6 } as unknown as Json;
    const withProto = JSON.parse('{"__proto__": {"b": 1, "a": 2}, "x": 0}') as Json;
    expect(Object.keys(inJsonbOrder(value) as object)).toEqual(['b', 'ab', 'zz', 'é', 'aaa', '__proto__x']);
    const ordered = inJsonbOrder(withProto) as Record<string, Json>;
    expect(Object.getPrototypeOf(ordered)).toBe(Object.prototype);
    expect(JSON.stringify(ordered)).toBe('{"x":0,"__proto__":{"a":2,"b":1}}');
  });
});
