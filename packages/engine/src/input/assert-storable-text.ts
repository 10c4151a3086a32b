import { EngineError } from '../errors/engine-error.ts';
import { describeBadText } from './describe-bad-text.ts';

export interface TextRules {
  /** Longest accepted string, in UTF-16 code units (JavaScript's `length`). */
  maxLength: number;
  /** Whether '' (or only whitespace) is accepted; default false. */
  allowBlank?: boolean;
}

/**
 * Refuses, as `invalid_input` naming the field, a text value the database would refuse or silently
 * change: not a string, blank, longer than the limit, a NUL, a lone UTF-16 surrogate. For ids,
 * business keys, tags, signal names, reasons, idempotency keys, message ids and types.
 *
 * @example
 * const key = assertStorableText(opts.businessKey, 'businessKey', { maxLength: 1000 });
 */
export function assertStorableText(value: unknown, field: string, rules: TextRules): string {
  if (typeof value !== 'string')
    throw new EngineError('invalid_input', `${field}: must be a string, got ${describeType(value)}`, { field });
  if (!rules.allowBlank && value.trim() === '')
    throw new EngineError('invalid_input', `${field}: must not be blank`, { field });
  if (value.length > rules.maxLength)
    throw new EngineError(
      'invalid_input',
      `${field}: is ${value.length} characters long, more than the limit of ${rules.maxLength}`,
      { field },
    );
  const bad = describeBadText(value);
  if (bad) throw new EngineError('invalid_input', `${field}: ${bad}`, { field });
  return value;
}

export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') {
    const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    return typeof name === 'string' && name !== 'Object' ? `a ${name}` : 'an object';
  }
  if (typeof value === 'number') return Number.isNaN(value) ? 'NaN' : String(value);
  return typeof value === 'bigint' ? 'a BigInt' : typeof value;
}
