import { validateAgainstSchema } from '../input/validate-against-schema.ts';
import type { Json } from './define-action.ts';
import type { FlowContext, FlowDefinition } from './flow-context.ts';
import type { StandardSchemaV1 } from './standard-schema.ts';

/**
 * Declares an orchestrated saga: code that is replayed from its recorded steps after any crash.
 * Everything that is not pure computation goes through `ctx`, so replay can reproduce it.
 *
 * `input`, `output` and `signals` take any Standard Schema validator (zod 4, valibot, arktype); the
 * types then come from the schemas. `startFlow` and `signal` check a value before writing anything
 * and refuse it as `invalid_input` naming the path (`input.amount: expected number`); the control
 * plane renders its start form from the input schema.
 *
 * @example
 * const fulfil = defineFlow({
 *   name: 'fulfil-order',
 *   version: 1,
 *   input: z.object({ orderId: z.string() }),
 *   signals: { approve: z.object({ by: z.string() }) },
 *   run: async (ctx, input) => {
 *     try {
 *       const { chargeId } = await ctx.action(chargeCard, { orderId: input.orderId })
 *         .compensateWith(refundCard, (out) => ({ chargeId: out.chargeId }));
 *       await ctx.action(shipOrder, { orderId: input.orderId });
 *       return { chargeId };
 *     } catch (err) {
 *       await ctx.compensate();
 *       throw err;
 *     }
 *   },
 * });
 */
export function defineFlow<I extends Json, O extends Json, In = I>(spec: {
  name: string;
  version: number;
  /** Its input type (`z.input`) is what a start passes, its output type (`z.output`) what `run` gets. */
  input?: StandardSchemaV1<In, I>;
  output?: StandardSchemaV1<unknown, O>;
  signals?: Record<string, StandardSchemaV1>;
  run: (ctx: FlowContext, input: I) => Promise<O>;
}): FlowDefinition<I, O, In> {
  const { input, output, signals } = spec;
  const run = output
    ? // A result its own schema refuses fails the run as invalid_input naming the path; replay
      // reaches the same verdict every time, so the record never disagrees with the code.
      async (ctx: FlowContext, value: I): Promise<O> =>
        (await validateAgainstSchema(output, await spec.run(ctx, value), 'output')) as O
    : spec.run;
  return { kind: 'flow', name: spec.name, version: spec.version, run, schemas: { input, output, signals } };
}
