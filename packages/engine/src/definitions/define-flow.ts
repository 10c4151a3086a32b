import type { Json } from './define-action.ts';
import type { FlowContext, FlowDefinition } from './flow-context.ts';

/**
 * Declares an orchestrated saga: code that is replayed from its recorded steps after any crash.
 * Everything that is not pure computation goes through `ctx`, so replay can reproduce it.
 *
 * @example
 * const fulfil = defineFlow({ name: 'fulfil-order', version: 1, run: async (ctx, input: { orderId: string }) => {
 *   try {
 *     const { chargeId } = await ctx.action(chargeCard, { orderId: input.orderId })
 *       .compensateWith(refundCard, (out) => ({ chargeId: out.chargeId }));
 *     await ctx.action(shipOrder, { orderId: input.orderId });
 *     return { chargeId };
 *   } catch (err) {
 *     await ctx.compensate();
 *     throw err;
 *   }
 * }});
 */
export function defineFlow<I extends Json, O extends Json>(spec: {
  name: string;
  version: number;
  run: (ctx: FlowContext, input: I) => Promise<O>;
}): FlowDefinition<I, O> {
  return { kind: 'flow', name: spec.name, version: spec.version, run: spec.run };
}
