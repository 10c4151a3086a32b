import { EngineError } from '../errors/engine-error.ts';
import { describeType } from './assert-storable-text.ts';
import { describeBadText, quoteForMessage } from './describe-bad-text.ts';

export interface JsonRules {
  /** Largest accepted value, in bytes of its compact JSON text (UTF-8). */
  maxBytes: number;
  /** Deepest accepted nesting of arrays and objects. */
  maxDepth: number;
  /** The setting that holds `maxBytes`, named in the error so an operator knows what to raise. */
  setting: string;
}

/**
 * A value still to check, and where it sits inside the field (its parent's frame and its key there):
 * one object per value, which is also the path's link, built into a path only when something is
 * refused.
 */
interface Frame {
  value: unknown;
  parent: Frame | null;
  key: string | number | null;
  depth: number;
}

/** Marks the end of an object's children on the stack: it stops being an ancestor there. */
interface Leave {
  leave: object;
}

const identifier = /^[A-Za-z_$][\w$]*$/;

function pathOf(field: string, at: Frame): string {
  const parts: string[] = [];
  for (let s: Frame | null = at; s && s.key !== null; s = s.parent)
    parts.push(
      typeof s.key === 'number' ? `[${s.key}]` : identifier.test(s.key) ? `.${s.key}` : `[${quoteForMessage(s.key)}]`,
    );
  return field + parts.reverse().join('');
}

const refuse = (field: string, at: Frame, why: string) => {
  const path = pathOf(field, at);
  return new EngineError('invalid_input', `${path}: ${why}`, { field: path });
};

const tooLarge = (field: string, rules: JsonRules) =>
  new EngineError(
    'invalid_input',
    `${field}: is larger than ${rules.maxBytes} bytes of JSON, the limit (${rules.setting})`,
    {
      field,
    },
  );

/**
 * The bytes of `text` as a JSON string (quotes included) when every character is printable ASCII
 * that JSON leaves as it is, which is also text the database stores as it is; -1 otherwise (a
 * quote, a backslash, a control character or anything beyond ASCII), where the full checks decide.
 * Most keys and values are such text: they skip the scan for bad text and the JSON rendering.
 */
function plainAsciiJsonBytes(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x20 || unit > 0x7e || unit === 0x22 || unit === 0x5c) return -1;
  }
  return text.length + 2;
}

/** Why `text` cannot be stored (`bad` words it, for the caller's message), or its bytes as JSON. */
function textBytes(text: string): number | { bad: string } {
  const plain = plainAsciiJsonBytes(text);
  if (plain >= 0) return plain;
  const bad = describeBadText(text);
  if (bad) return { bad };
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
export function assertStorableJson(value: unknown, field: string, rules: JsonRules): number {
  const { maxBytes } = rules;
  const ancestors = new Set<object>();
  const stack: (Frame | Leave)[] = [{ value, parent: null, key: null, depth: 0 }];
  let bytes = 0;
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    if ('leave' in frame) {
      ancestors.delete(frame.leave);
      continue;
    }
    const { value: v, depth } = frame;
    switch (typeof v) {
      case 'string': {
        if (v.length > maxBytes && (bytes += v.length) > maxBytes) throw tooLarge(field, rules);
        const text = textBytes(v);
        if (typeof text !== 'number') throw refuse(field, frame, text.bad);
        if ((bytes += text) > maxBytes) throw tooLarge(field, rules);
        continue;
      }
      case 'number':
        if (!Number.isFinite(v)) throw refuse(field, frame, `${v} is not a number JSON can represent`);
        if ((bytes += JSON.stringify(v).length) > maxBytes) throw tooLarge(field, rules);
        continue;
      case 'boolean':
        if ((bytes += v ? 4 : 5) > maxBytes) throw tooLarge(field, rules);
        continue;
      case 'bigint':
        throw refuse(field, frame, 'a BigInt, which JSON cannot represent (pass it as a string)');
      case 'undefined':
        throw refuse(field, frame, 'undefined, which JSON cannot represent (use null, or leave the key out)');
      case 'function':
        throw refuse(field, frame, 'a function, which JSON cannot represent');
      case 'symbol':
        throw refuse(field, frame, 'a Symbol, which JSON cannot represent');
      case 'object':
        break;
    }
    if (v === null) {
      if ((bytes += 4) > maxBytes) throw tooLarge(field, rules);
      continue;
    }
    const obj = v;
    if (ancestors.has(obj)) throw refuse(field, frame, 'a circular reference, which JSON cannot represent');
    if (depth >= rules.maxDepth)
      throw refuse(field, frame, `nested more than ${rules.maxDepth} levels deep, the limit of nesting`);
    ancestors.add(obj);
    stack.push({ leave: obj });
    if (Array.isArray(obj)) {
      const items = obj as unknown[];
      if ((bytes += 2 + Math.max(0, items.length - 1)) > maxBytes) throw tooLarge(field, rules);
      for (let i = items.length - 1; i >= 0; i--) {
        const child: Frame = { value: undefined, parent: frame, key: i, depth: depth + 1 };
        if (!(i in items))
          throw refuse(field, child, 'an empty slot of a sparse array, which JSON would turn into null');
        child.value = items[i];
        stack.push(child);
      }
      continue;
    }
    const proto: unknown = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null)
      throw refuse(
        field,
        frame,
        `${describeType(obj)}, not a plain object: JSON would store a different value (convert it first, e.g. a Date to an ISO string)`,
      );
    const symbols = Object.getOwnPropertySymbols(obj);
    if (symbols.length > 0 && symbols.some((s) => Object.prototype.propertyIsEnumerable.call(obj, s)))
      throw refuse(field, frame, 'an object with Symbol keys, which JSON cannot represent');
    const keys = Object.keys(obj);
    if ((bytes += 2 + Math.max(0, keys.length - 1)) > maxBytes) throw tooLarge(field, rules);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as string;
      const child: Frame = { value: undefined, parent: frame, key, depth: depth + 1 };
      const text = textBytes(key);
      if (typeof text !== 'number') throw refuse(field, child, `the key ${text.bad}`);
      if ((bytes += text + 1) > maxBytes) throw tooLarge(field, rules);
      child.value = (obj as Record<string, unknown>)[key];
      stack.push(child);
    }
  }
  return bytes;
}
