import { describe, expect, it } from 'vitest';
import { decideRetry } from './decide-retry.ts';
import { maxBackoffMs } from './engine-config.ts';

const defaults = { base_delay_ms: 1000, max_delay_ms: 60_000 };
const retryAt = (ms: number | null) => (ms === null ? null : new Date(Date.now() + ms));

describe('decideRetry: the delay is always a number from 0 to ten years, so the retry time is a date', () => {
  it.each([
    ['a growth of 0 * Infinity (NaN) from a checked policy', { initialMs: 0, multiplier: 1e300, jitter: false }, 3],
    ['a NaN initialMs no definition checked', { initialMs: Number.NaN, jitter: false }, 1],
    ['a NaN maxMs no definition checked', { maxMs: Number.NaN, jitter: false }, 1],
    [
      'an Infinity maxMs and a growth past any number',
      { maxMs: Number.POSITIVE_INFINITY, multiplier: 1e300, jitter: false },
      5,
    ],
    ['a growth past a date, jittered', { initialMs: maxBackoffMs, multiplier: 10 }, 4],
  ])('%s', (_, backoff, failedAttempt) => {
    const { retryInMs } = decideRetry({ maxAttempts: 10, backoff }, defaults, failedAttempt, new Error('x'));
    expect(Number.isFinite(retryInMs)).toBe(true);
    expect(retryInMs).toBeGreaterThanOrEqual(0);
    expect(retryInMs).toBeLessThanOrEqual(maxBackoffMs);
    expect(Number.isNaN(retryAt(retryInMs)?.getTime())).toBe(false);
  });

  it('a delay that grows past its cap waits the cap', () => {
    const policy = { maxAttempts: 10, backoff: { initialMs: 0, multiplier: 1e300, maxMs: 5000, jitter: false } };
    expect(decideRetry(policy, defaults, 3, new Error('x')).retryInMs).toBe(5000);
  });

  it('a custom delay past a date waits ten years', () => {
    const policy = { maxAttempts: 3, delay: () => 1e20 };
    expect(decideRetry(policy, defaults, 1, new Error('x')).retryInMs).toBe(maxBackoffMs);
  });

  it('an error whose name cannot be read is retried, not thrown out of the catch that records it', () => {
    const err = new Error('x');
    Object.defineProperty(err, 'name', {
      get() {
        throw new Error('no name for you');
      },
    });
    const decision = decideRetry({ maxAttempts: 2, nonRetryableErrors: ['X'] }, defaults, 1, err, () => 0);
    expect(decision.retryInMs).toBe(500);
  });
});
