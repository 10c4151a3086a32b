/** JSON-serialisable values: what action inputs and outputs are stored as. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

export interface RetryPolicy {
  /** Total tries, the first included. Defaults to 1 (no retry). */
  maxAttempts?: number;
}

export interface ActionDefinition<I extends Json = Json, O extends Json = Json> {
  readonly kind: 'action';
  readonly name: string;
  readonly retry: Required<RetryPolicy>;
  readonly run: (input: I) => Promise<O>;
}

/**
 * Registers a unit of side-effecting work by name. Any worker can run it from its row alone (name +
 * JSON input), which is what lets recovery re-dispatch it.
 *
 * @example
 * const chargeCard = defineAction({ name: 'charge-card', run: async (i: { orderId: string }) => ({ chargeId: 'ch_1' }) });
 */
export function defineAction<I extends Json, O extends Json>(spec: {
  name: string;
  retry?: RetryPolicy;
  run: (input: I) => Promise<O>;
}): ActionDefinition<I, O> {
  return { kind: 'action', name: spec.name, retry: { maxAttempts: spec.retry?.maxAttempts ?? 1 }, run: spec.run };
}
