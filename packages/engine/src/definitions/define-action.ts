/** JSON-serialisable values: what action inputs and outputs are stored as. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/**
 * How an action is retried. Retryability belongs to the error first: a thrown
 * {@link NonRetryableError}, or an error whose `name` is listed in `nonRetryableErrors`, fails the
 * step at once whatever attempts remain.
 */
export interface RetryPolicy {
  /** Total tries, the first included. Default 1 (no retry). */
  maxAttempts?: number;
  /** Delay before try n+1 is `initialMs * multiplier^(n-1)`, capped at `maxMs`, with equal jitter (half fixed, half random) unless `jitter` is false. */
  backoff?: { initialMs?: number; multiplier?: number; maxMs?: number; jitter?: boolean };
  /** Error names (`err.name`) that are never retried. */
  nonRetryableErrors?: string[];
  /**
   * Custom delay in ms before the next try, or null to stop retrying. If it throws, the step fails
   * for good and the throw is journaled (`retry_policy_threw`).
   */
  delay?: (failedAttempt: number, error: unknown) => number | null;
}

export interface ActionDefinition<I extends Json = Json, O extends Json = Json> {
  readonly kind: 'action';
  readonly name: string;
  readonly retry: RetryPolicy;
  readonly run: (input: I) => Promise<O>;
}

/**
 * Registers a unit of side-effecting work by name. Any worker can run it from its row alone (name +
 * JSON input), which is what lets recovery re-dispatch it. Make it idempotent: at-least-once
 * delivery means it may run twice, though only one outcome is ever recorded.
 *
 * @example
 * const chargeCard = defineAction({
 *   name: 'charge-card',
 *   retry: { maxAttempts: 5, nonRetryableErrors: ['CardDeclined'] },
 *   run: async (i: { orderId: string }) => ({ chargeId: await psp.charge(i.orderId) }),
 * });
 */
export function defineAction<I extends Json, O extends Json>(spec: {
  name: string;
  retry?: RetryPolicy;
  run: (input: I) => Promise<O>;
}): ActionDefinition<I, O> {
  return { kind: 'action', name: spec.name, retry: spec.retry ?? {}, run: spec.run };
}

/** Thrown by an action to say trying again cannot help (a declined card, a validation failure). */
export class NonRetryableError extends Error {
  override readonly name: string = 'NonRetryableError';
}
