import { EngineError } from '../errors/engine-error.ts';
import { checkRetryPolicy } from './check-retry-policy.ts';
import { validateAgainstSchema } from '../input/validate-against-schema.ts';
import type { StandardSchemaV1 } from './standard-schema.ts';

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
  /** Runs the action; with declared schemas, its input and output are checked around the code. */
  readonly run: (input: I) => Promise<O>;
  /** The schemas the action declared: a repair that supplies its output is checked against `output`. */
  readonly schemas: ActionSchemas;
}

/** Optional Standard Schema validators (zod 4, valibot, arktype...) for a definition's values. */
export interface ActionSchemas {
  readonly input?: StandardSchemaV1 | undefined;
  readonly output?: StandardSchemaV1 | undefined;
}

/**
 * Registers a unit of side-effecting work by name. Any worker can run it from its row alone (name +
 * JSON input), which is what lets recovery re-dispatch it. Make it idempotent: at-least-once
 * delivery means it may run twice, though only one outcome is ever recorded.
 *
 * `input` and `output` take any Standard Schema validator; the types then come from the schemas. An
 * input or output that does not match fails the step at once (never retried: the same value would
 * fail again), with a message naming the path (`output.chargeId: expected string`).
 *
 * The retry policy is checked here: a field out of range (a NaN, a delay over ten years, a misspelt key)
 * is refused as `invalid_input` naming it (`retry.backoff.initialMs: must be an integer from 0 to …`).
 *
 * @example
 * const chargeCard = defineAction({
 *   name: 'charge-card',
 *   input: z.object({ orderId: z.string() }),
 *   output: z.object({ chargeId: z.string() }),
 *   run: async (i) => ({ chargeId: await psp.charge(i.orderId) }),
 * });
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
  input?: StandardSchemaV1<unknown, I>;
  output?: StandardSchemaV1<unknown, O>;
  run: (input: I) => Promise<O>;
}): ActionDefinition<I, O> {
  const { input, output } = spec;
  const run =
    input || output
      ? async (value: I): Promise<O> => {
          const checkedInput = input ? ((await checked(input, value, 'input')) as I) : value;
          const result = await spec.run(checkedInput);
          return output ? ((await checked(output, result, 'output')) as O) : result;
        }
      : spec.run;
  const retry = spec.retry === undefined ? {} : checkRetryPolicy(spec.retry);
  return { kind: 'action', name: spec.name, retry, run, schemas: { input, output } };
}

/** A value refused by the action's own schema: the step fails for good, naming the path. */
async function checked(schema: StandardSchemaV1, value: unknown, field: string): Promise<unknown> {
  try {
    return await validateAgainstSchema(schema, value, field);
  } catch (err) {
    if (!(err instanceof EngineError)) throw err;
    throw new NonRetryableError(err.message, { cause: err });
  }
}

/** Thrown by an action to say trying again cannot help (a declined card, a validation failure). */
export class NonRetryableError extends Error {
  override readonly name: string = 'NonRetryableError';
}
