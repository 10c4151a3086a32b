/** Exponential backoff with full jitter, from the attempt that just failed (1-based). */
export function retryDelayMs(
  policy: { base_delay_ms: number; max_delay_ms: number },
  failedAttempt: number,
  random = Math.random,
): number {
  const ceiling = Math.min(policy.max_delay_ms, policy.base_delay_ms * 2 ** Math.max(0, failedAttempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
