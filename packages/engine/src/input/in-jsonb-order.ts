import type { Json } from '../definitions/define-action.ts';

/** Whether every UTF-16 unit of `key` is ASCII: its UTF-8 bytes are then its units, one for one. */
function isAscii(key: string): boolean {
  for (let i = 0; i < key.length; i++) if (key.charCodeAt(i) > 0x7f) return false;
  return true;
}

/**
 * jsonb's order of an object's keys: shorter first (in UTF-8 bytes), then byte by byte. Two ASCII
 * keys (most keys) compare as they are, with no UTF-8 copy of either: their lengths are their byte
 * counts, and their units in order are their bytes.
 */
function jsonbKeyOrder(a: string, b: string): number {
  if (isAscii(a) && isAscii(b)) return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  const [x, y] = [Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')];
  return x.length - y.length || Buffer.compare(x, y);
}

/**
 * `value` as a jsonb column gives it back: every object's keys in jsonb's order (ADR 0048). A replay
 * of a run not written yet works from its input as the caller gave it, the replay after the start
 * from the input the start's statement read back; code that names or orders its first step by an
 * object's keys must see them in the same order in both, or the second would find a step recorded
 * that its code does not ask for. Keys whose value is undefined are left out, as in the stored JSON,
 * and a -0 is 0, as JSON writes it: code that tells them apart must choose alike in both.
 */
export function inJsonbOrder(value: Json): Json {
  if (Array.isArray(value)) return value.map(inJsonbOrder);
  if (Object.is(value, -0)) return 0;
  if (value === null || typeof value !== 'object') return value;
  const ordered: Record<string, Json> = {};
  for (const key of Object.keys(value).sort(jsonbKeyOrder)) {
    const v = (value as Record<string, Json | undefined>)[key];
    if (v === undefined) continue;
    // As JSON.parse does: "__proto__" is a key of its own, not the object's prototype.
    Object.defineProperty(ordered, key, {
      value: inJsonbOrder(v),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return ordered;
}
