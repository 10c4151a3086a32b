/** One value of each class the engine must refuse in a JSON field, and where inside it the bad part sits. */
export interface BadJson {
  label: string;
  /** Builds the value (fresh each time: some are circular or huge). */
  value: () => unknown;
  /** The path, after the field name, that the error must name. */
  at: string;
  /** A fragment the error message must contain. */
  says: RegExp;
}

class Money {
  constructor(readonly cents: number) {}
}

const nested = (bad: unknown) => ({ items: [{ name: bad }] });

export const badJsonValues: BadJson[] = [
  { label: 'BigInt', value: () => nested(10n), at: '.items[0].name', says: /BigInt/ },
  { label: 'NaN', value: () => nested(Number.NaN), at: '.items[0].name', says: /NaN/ },
  { label: 'Infinity', value: () => nested(Number.POSITIVE_INFINITY), at: '.items[0].name', says: /Infinity/ },
  { label: '-Infinity', value: () => nested(Number.NEGATIVE_INFINITY), at: '.items[0].name', says: /-Infinity/ },
  { label: 'a function', value: () => nested(() => 1), at: '.items[0].name', says: /function/ },
  { label: 'a Symbol', value: () => nested(Symbol('s')), at: '.items[0].name', says: /Symbol/ },
  { label: 'undefined as a property', value: () => nested(undefined), at: '.items[0].name', says: /undefined/ },
  { label: 'undefined in an array', value: () => ({ items: [1, undefined] }), at: '.items[1]', says: /undefined/ },
  {
    label: 'a circular reference',
    value: () => {
      const o: { items: { name?: unknown }[] } = { items: [{}] };
      (o.items[0] as { name?: unknown }).name = o;
      return o;
    },
    at: '.items[0].name',
    says: /circular/,
  },
  {
    label: '50,000 levels deep',
    value: () => {
      let v: unknown = 'bottom';
      for (let i = 0; i < 50_000; i++) v = { next: v };
      return v;
    },
    at: '.next',
    says: /nested more than \d+ levels/,
  },
  { label: 'NUL in a string', value: () => nested('tab\u0000bed'), at: '.items[0].name', says: /NUL/ },
  { label: 'NUL in a key', value: () => ({ items: [{ 'k\u0000': 1 }] }), at: '.items[0]["k\\u0000"]', says: /NUL/ },
  {
    label: 'lone high surrogate',
    value: () => nested('sur-\ud800'),
    at: '.items[0].name',
    says: /lone UTF-16 surrogate/,
  },
  {
    label: 'lone low surrogate',
    value: () => nested('sur-\udc00x'),
    at: '.items[0].name',
    says: /lone UTF-16 surrogate/,
  },
  {
    label: 'lone surrogate in a key',
    value: () => ({ items: [{ 'k\udbff': 1 }] }),
    at: '.items[0]["k\\udbff"]',
    says: /lone UTF-16 surrogate/,
  },
  { label: 'a Date', value: () => nested(new Date(0)), at: '.items[0].name', says: /Date, not a plain object/ },
  { label: 'a Map', value: () => nested(new Map([['a', 1]])), at: '.items[0].name', says: /Map, not a plain object/ },
  {
    label: 'a class instance',
    value: () => nested(new Money(5)),
    at: '.items[0].name',
    says: /Money, not a plain object/,
  },
  { label: 'more than 1 MiB', value: () => nested('x'.repeat(1_100_000)), at: '', says: /larger than 1048576 bytes/ },
];

/** Each class of text the engine must refuse in an id, key, name or reason. */
export const badTextValues: { label: string; value: unknown; says: RegExp }[] = [
  { label: 'NUL', value: 'a\u0000b', says: /NUL/ },
  { label: 'lone high surrogate', value: 'sur-\ud800', says: /lone UTF-16 surrogate/ },
  { label: 'lone low surrogate', value: 'sur-\udfff', says: /lone UTF-16 surrogate/ },
  { label: 'too long', value: 'x'.repeat(1001), says: /more than the limit of 1000/ },
  { label: 'not a string', value: 42, says: /must be a string/ },
];
