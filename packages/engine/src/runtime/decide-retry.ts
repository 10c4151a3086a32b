import { NonRetryableError, type RetryPolicy } from '../definitions/define-action.ts';

/**
 * Whether and when a failed try is retried. Retryability belongs to the error first
 * (NonRetryableError, or a name the policy lists), then to the attempt budget, then to the delay.
 * A custom delay that throws stops the retries: the step fails safely, and the throw is reported.
 */
export function decideRetry(
  policy: RetryPolicy,
  defaults: { base_delay_ms: number; max_delay_ms: number },
  failedAttempt: number,
  error: unknown,
  random: () => number = Math.random,
): { retryInMs: number | null; policyThrew?: unknown } {
  const maxAttempts = policy.maxAttempts ?? 1;
  const name = error instanceof Error ? error.name : undefined;
  if (error instanceof NonRetryableError || (name !== undefined && policy.nonRetryableErrors?.includes(name)))
    return { retryInMs: null };
  if (failedAttempt >= maxAttempts) return { retryInMs: null };
  if (policy.delay) {
    try {
      const ms = policy.delay(failedAttempt, error);
      if (ms !== null && !Number.isFinite(ms))
        throw new RangeError(`retry delay must be a finite number of ms, got ${String(ms)}`);
      return { retryInMs: ms === null ? null : Math.max(0, ms) };
    } catch (threw) {
      return { retryInMs: null, policyThrew: threw };
    }
  }
  const initial = policy.backoff?.initialMs ?? defaults.base_delay_ms;
  const multiplier = policy.backoff?.multiplier ?? 2;
  const max = policy.backoff?.maxMs ?? defaults.max_delay_ms;
  const ceiling = Math.min(max, initial * multiplier ** (failedAttempt - 1));
  const jitter = policy.backoff?.jitter ?? true;
  return { retryInMs: Math.round(jitter ? ceiling / 2 + (random() * ceiling) / 2 : ceiling) };
}
