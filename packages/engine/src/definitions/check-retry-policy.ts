import { EngineError } from '../errors/engine-error.ts';
import { assertInteger } from '../input/assert-integer.ts';
import { describeType } from '../input/assert-storable-text.ts';
import { maxBackoffMs } from '../runtime/engine-config.ts';
import type { RetryPolicy } from './define-action.ts';

/** What the steps' `max_attempts` column (INTEGER) holds. */
const maxAttemptsLimit = 2_147_483_647;

/**
 * Refuses a retry policy the engine could not follow, as `invalid_input` naming the field
 * (`retry.backoff.initialMs`), when the action is defined: a NaN or out-of-range delay left the
 * step Running with an Invalid Date for its retry (review 35), and a misspelt key silently meant no
 * retry. Delays are at most ten years, as in the engine config, so a retry's time is always a date.
 */
export function checkRetryPolicy(policy: unknown, field = 'retry'): RetryPolicy {
  const refuse = (at: string, why: string) => new EngineError('invalid_input', `${at}: ${why}`, { field: at });
  const known = (value: object, at: string, keys: readonly string[]) => {
    const unknown = Object.keys(value).find((k) => !keys.includes(k));
    if (unknown !== undefined) throw refuse(`${at}.${unknown}`, `is not a retry setting (${keys.join(', ')})`);
  };
  if (typeof policy !== 'object' || policy === null || Array.isArray(policy))
    throw refuse(field, `must be an object, got ${describeType(policy)}`);
  const p = policy as Record<string, unknown>;
  known(p, field, ['maxAttempts', 'backoff', 'nonRetryableErrors', 'delay']);
  if (p.maxAttempts !== undefined) assertInteger(p.maxAttempts, `${field}.maxAttempts`, 1, maxAttemptsLimit);
  if (p.backoff !== undefined) {
    const at = `${field}.backoff`;
    if (typeof p.backoff !== 'object' || p.backoff === null || Array.isArray(p.backoff))
      throw refuse(at, `must be an object, got ${describeType(p.backoff)}`);
    const b = p.backoff as Record<string, unknown>;
    known(b, at, ['initialMs', 'multiplier', 'maxMs', 'jitter']);
    if (b.initialMs !== undefined) assertInteger(b.initialMs, `${at}.initialMs`, 0, maxBackoffMs);
    if (b.maxMs !== undefined) assertInteger(b.maxMs, `${at}.maxMs`, 0, maxBackoffMs);
    if (
      b.multiplier !== undefined &&
      !(typeof b.multiplier === 'number' && Number.isFinite(b.multiplier) && b.multiplier >= 1)
    )
      throw refuse(`${at}.multiplier`, `must be a finite number of at least 1, got ${describeType(b.multiplier)}`);
    if (b.jitter !== undefined && typeof b.jitter !== 'boolean')
      throw refuse(`${at}.jitter`, `must be true or false, got ${describeType(b.jitter)}`);
  }
  if (
    p.nonRetryableErrors !== undefined &&
    !(Array.isArray(p.nonRetryableErrors) && p.nonRetryableErrors.every((n) => typeof n === 'string'))
  )
    throw refuse(`${field}.nonRetryableErrors`, 'must be an array of error names (strings)');
  if (p.delay !== undefined && typeof p.delay !== 'function')
    throw refuse(`${field}.delay`, `must be a function, got ${describeType(p.delay)}`);
  return policy;
}
