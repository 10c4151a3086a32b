/**
 * A value as JSON text with its object keys sorted (jsonb keeps its own key order), after the JSON round
 * trip the store applies (a Date becomes its ISO string, an `undefined` property is left out); null when
 * it has no JSON form at all.
 */
function sortedJson(value: unknown): string | null {
  let plain: unknown;
  try {
    const text = JSON.stringify(value);
    plain = text === undefined ? null : JSON.parse(text);
  } catch {
    return null;
  }
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : typeof v === 'object' && v !== null
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sort((v as Record<string, unknown>)[k])]),
          )
        : v;
  return JSON.stringify(sort(plain));
}

/**
 * Whether two values are the same as stored JSON, whatever their objects' key order: how a command
 * given again under its idempotency key is told from another command under a reused key (review 39).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  const x = sortedJson(a);
  return x !== null && x === sortedJson(b);
}
