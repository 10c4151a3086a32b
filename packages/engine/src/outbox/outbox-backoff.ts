/** Delay before retry after failed attempt `attempt` (1-based): base * 2^(attempt-1), capped at max. */
export function outboxBackoffMs(attempt: number, policy: { baseDelayMs: number; maxDelayMs: number }): number {
  const exponent = Math.min(Math.max(attempt, 1) - 1, 52);
  return Math.min(policy.baseDelayMs * 2 ** exponent, policy.maxDelayMs);
}
