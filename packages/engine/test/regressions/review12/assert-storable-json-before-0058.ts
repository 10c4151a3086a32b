// main's assertStorableJson as it was before ADR 0058 (commit 7646a49), frozen as the oracle of
// assert-storable-json-matches-before-0058.test.ts: the fast path must refuse and size exactly as this did.
import { EngineError } from '../../../src/errors/engine-error.ts';
import { describeType } from '../../../src/input/assert-storable-text.ts';
import { describeBadText, quoteForMessage } from '../../../src/input/describe-bad-text.ts';
import type { JsonRules } from '../../../src/input/assert-storable-json.ts';

/** Where a value sits inside the field: built into a path only when something is refused. */
interface Step {
  parent: Step | null;
  key: string | number | null;
}

type Frame = { value: unknown; at: Step; depth: number } | { leave: object };

const identifier = /^[A-Za-z_$][\w$]*$/;

function pathOf(field: string, at: Step): string {
  const parts: string[] = [];
  for (let s: Step | null = at; s && s.key !== null; s = s.parent)
    parts.push(
      typeof s.key === 'number' ? `[${s.key}]` : identifier.test(s.key) ? `.${s.key}` : `[${quoteForMessage(s.key)}]`,
    );
  return field + parts.reverse().join('');
}

function jsonBytes(text: string): number {
  return Buffer.byteLength(JSON.stringify(text));
}

/**
 * Refuses, as `invalid_input` naming the field and the path inside it
 * (`input.items[3].name: lone UTF-16 surrogate …`), any value that JSON and PostgreSQL's jsonb
 * cannot hold exactly as given: BigInt, NaN and ±Infinity, functions, Symbols, `undefined` (as an
 * array element, a property value or the value itself), empty slots of sparse arrays, circular
 * references, objects that are not plain (Date, Map, Set, Buffer, class instances) or have Symbol
 * keys, NUL and lone UTF-16 surrogates in strings and keys, nesting deeper than `maxDepth`, and more
 * than `maxBytes` of JSON. Nothing is converted: what is accepted is stored and read back as it was.
 * The walk is iterative, so a 50,000-deep value is refused, not a RangeError. Returns the JSON size.
 *
 * @example
 * assertStorableJson(input, 'input', { maxBytes: 1_048_576, maxDepth: 64, setting: 'limits.flow_input_bytes' });
 */
export function assertStorableJsonBefore0058(value: unknown, field: string, rules: JsonRules): number {
  const refuse = (at: Step, why: string) => {
    const path = pathOf(field, at);
    return new EngineError('invalid_input', `${path}: ${why}`, { field: path });
  };
  const ancestors = new Set<object>();
  const stack: Frame[] = [{ value, at: { parent: null, key: null }, depth: 0 }];
  let bytes = 0;
  const add = (n: number) => {
    bytes += n;
    if (bytes > rules.maxBytes)
      throw new EngineError(
        'invalid_input',
        `${field}: is larger than ${rules.maxBytes} bytes of JSON, the limit (${rules.setting})`,
        { field },
      );
  };
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    if ('leave' in frame) {
      ancestors.delete(frame.leave);
      continue;
    }
    const { value: v, at, depth } = frame;
    switch (typeof v) {
      case 'string': {
        if (v.length > rules.maxBytes) add(v.length);
        const bad = describeBadText(v);
        if (bad) throw refuse(at, bad);
        add(jsonBytes(v));
        continue;
      }
      case 'number':
        if (!Number.isFinite(v)) throw refuse(at, `${v} is not a number JSON can represent`);
        add(JSON.stringify(v).length);
        continue;
      case 'boolean':
        add(v ? 4 : 5);
        continue;
      case 'bigint':
        throw refuse(at, 'a BigInt, which JSON cannot represent (pass it as a string)');
      case 'undefined':
        throw refuse(at, 'undefined, which JSON cannot represent (use null, or leave the key out)');
      case 'function':
        throw refuse(at, 'a function, which JSON cannot represent');
      case 'symbol':
        throw refuse(at, 'a Symbol, which JSON cannot represent');
      case 'object':
        break;
    }
    if (v === null) {
      add(4);
      continue;
    }
    const obj = v;
    if (ancestors.has(obj)) throw refuse(at, 'a circular reference, which JSON cannot represent');
    if (depth >= rules.maxDepth)
      throw refuse(at, `nested more than ${rules.maxDepth} levels deep, the limit of nesting`);
    ancestors.add(obj);
    stack.push({ leave: obj });
    if (Array.isArray(obj)) {
      const items = obj as unknown[];
      add(2 + Math.max(0, items.length - 1));
      for (let i = items.length - 1; i >= 0; i--) {
        const child: Step = { parent: at, key: i };
        if (!(i in items)) throw refuse(child, 'an empty slot of a sparse array, which JSON would turn into null');
        stack.push({ value: items[i], at: child, depth: depth + 1 });
      }
      continue;
    }
    const proto: unknown = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null)
      throw refuse(
        at,
        `${describeType(obj)}, not a plain object: JSON would store a different value (convert it first, e.g. a Date to an ISO string)`,
      );
    if (Object.getOwnPropertySymbols(obj).some((s) => Object.prototype.propertyIsEnumerable.call(obj, s)))
      throw refuse(at, 'an object with Symbol keys, which JSON cannot represent');
    const keys = Object.keys(obj);
    add(2 + Math.max(0, keys.length - 1));
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as string;
      const child: Step = { parent: at, key };
      const bad = describeBadText(key);
      if (bad) throw refuse(child, `the key ${bad}`);
      add(jsonBytes(key) + 1);
      stack.push({ value: (obj as Record<string, unknown>)[key], at: child, depth: depth + 1 });
    }
  }
  return bytes;
}
