import { NonRetryableError, type RetryPolicy } from '../definitions/define-action.ts';
import { maxBackoffMs } from './engine-config.ts';

/**
 * Whether and when a failed try is retried. Retryability belongs to the error first
 * (NonRetryableError, or a name the policy lists), then to the attempt budget, then to the delay.
 * A custom delay that throws stops the retries: the step fails safely, and the throw is reported.
 * The delay is always a number from 0 to ten years, so the retry's time is always a date (ADR 0108).
 */
export function decideRetry(
  policy: RetryPolicy,
  defaults: { base_delay_ms: number; max_delay_ms: number },
  failedAttempt: number,
  error: unknown,
  random: () => number = Math.random,
): { retryInMs: number | null; policyThrew?: unknown } {
  const maxAttempts = policy.maxAttempts ?? 1;
  if (isNonRetryable(policy, error)) return { retryInMs: null };
  if (failedAttempt >= maxAttempts) return { retryInMs: null };
  if (policy.delay) {
    try {
      const ms = policy.delay(failedAttempt, error);
      if (ms !== null && !Number.isFinite(ms))
        throw new RangeError(`retry delay must be a finite number of ms, got ${String(ms)}`);
      return { retryInMs: ms === null ? null : Math.min(maxBackoffMs, Math.max(0, ms)) };
    } catch (threw) {
      return { retryInMs: null, policyThrew: threw };
    }
  }
  const initial = policy.backoff?.initialMs ?? defaults.base_delay_ms;
  const multiplier = policy.backoff?.multiplier ?? 2;
  const max = policy.backoff?.maxMs ?? defaults.max_delay_ms;
  const cap = Math.min(maxBackoffMs, Math.max(0, Number.isNaN(max) ? maxBackoffMs : max));
  // A checked policy can still grow past any number (0 * Infinity is NaN): a growth that is not a
  // number waits the longest the policy allows rather than making an Invalid Date (review 35).
  const grown = initial * multiplier ** (failedAttempt - 1);
  const ceiling = Number.isNaN(grown) ? cap : Math.min(cap, Math.max(0, grown));
  const jitter = policy.backoff?.jitter ?? true;
  return { retryInMs: Math.round(jitter ? ceiling / 2 + (random() * ceiling) / 2 : ceiling) };
}

/** A thrown value whose name cannot even be read (a throwing getter, a Proxy) is not listed, so retried. */
function isNonRetryable(policy: RetryPolicy, error: unknown): boolean {
  try {
    const name = error instanceof Error ? error.name : undefined;
    return (
      error instanceof NonRetryableError || (name !== undefined && (policy.nonRetryableErrors?.includes(name) ?? false))
    );
  } catch {
    return false;
  }
}
