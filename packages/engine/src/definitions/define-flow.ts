import type { ActionDefinition, Json } from './define-action.ts';

/** What a flow's code sees. Everything it does goes through here so replay can reproduce it. */
export interface FlowContext {
  readonly runId: string;
  /** Runs (or, on replay, returns the recorded result of) the next step. */
  action<I extends Json, O extends Json>(action: ActionDefinition<I, O>, input: I): Promise<O>;
}

export interface FlowDefinition<I extends Json = Json, O extends Json = Json> {
  readonly kind: 'flow';
  readonly name: string;
  readonly version: number;
  readonly run: (ctx: FlowContext, input: I) => Promise<O>;
}

/**
 * Declares an orchestrated saga: code that is replayed from its recorded steps after any crash.
 *
 * @example
 * const fulfil = defineFlow({ name: 'fulfil-order', version: 1, run: async (ctx, input: { orderId: string }) => {
 *   const { chargeId } = await ctx.action(chargeCard, { orderId: input.orderId });
 *   return { chargeId };
 * }});
 */
export function defineFlow<I extends Json, O extends Json>(spec: {
  name: string;
  version: number;
  run: (ctx: FlowContext, input: I) => Promise<O>;
}): FlowDefinition<I, O> {
  return { kind: 'flow', name: spec.name, version: spec.version, run: spec.run };
}
