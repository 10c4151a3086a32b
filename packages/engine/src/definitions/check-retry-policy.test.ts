import { describe, expect, it } from 'vitest';
import { EngineError } from '../errors/engine-error.ts';
import { checkRetryPolicy } from './check-retry-policy.ts';

const refusal = (policy: unknown) => {
  try {
    checkRetryPolicy(policy);
  } catch (err) {
    return err instanceof EngineError ? { code: err.code, field: err.field } : err;
  }
  return null;
};

describe('checkRetryPolicy refuses a policy the engine could not follow, naming the field', () => {
  it.each([
    [null, 'retry'],
    [{ maxAttempts: 0 }, 'retry.maxAttempts'],
    [{ maxAttempts: 1.5 }, 'retry.maxAttempts'],
    [{ maxAttempts: 3e9 }, 'retry.maxAttempts'],
    [{ maxAttempt: 3 }, 'retry.maxAttempt'],
    [{ backoff: 5 }, 'retry.backoff'],
    [{ backoff: { initialMs: Number.NaN } }, 'retry.backoff.initialMs'],
    [{ backoff: { initialMs: -1 } }, 'retry.backoff.initialMs'],
    [{ backoff: { initialMs: 9e15 } }, 'retry.backoff.initialMs'],
    [{ backoff: { maxMs: Number.POSITIVE_INFINITY } }, 'retry.backoff.maxMs'],
    [{ backoff: { multiplier: Number.NaN } }, 'retry.backoff.multiplier'],
    [{ backoff: { multiplier: 0.5 } }, 'retry.backoff.multiplier'],
    [{ backoff: { jitter: 'yes' } }, 'retry.backoff.jitter'],
    [{ backoff: { initalMs: 10 } }, 'retry.backoff.initalMs'],
    [{ nonRetryableErrors: 'CardDeclined' }, 'retry.nonRetryableErrors'],
    [{ nonRetryableErrors: [1] }, 'retry.nonRetryableErrors'],
    [{ delay: 100 }, 'retry.delay'],
  ])('%j is refused as invalid_input at %s', (policy, field) => {
    expect(refusal(policy)).toEqual({ code: 'invalid_input', field });
  });

  it.each([
    {},
    { maxAttempts: 5, nonRetryableErrors: ['CardDeclined'] },
    { maxAttempts: 3, backoff: { initialMs: 1000, multiplier: 1, maxMs: 10 * 365 * 86_400_000, jitter: false } },
    { maxAttempts: 3, delay: () => null },
  ])('%j is accepted as given', (policy) => {
    expect(checkRetryPolicy(policy)).toBe(policy);
  });
});
