import type { Json } from '../definitions/define-action.ts';
import type { FlowDefinition } from '../definitions/flow-context.ts';
import { EngineError } from '../errors/engine-error.ts';
import { checkedFlowInput } from '../input/checked-flow-input.ts';
import type { InputLimits } from '../input/input-limits.ts';

/**
 * A child flow's input checked against the child's declared schema before the child is started
 * (ADR 0031): a value the child would refuse from `startFlow` is refused here too, as
 * `invalid_input` naming the path (`input.amount`), and nothing is written, so the parent's code
 * gets the error at `ctx.child` instead of a child failing in its actions. The same input meets the
 * same schema on every replay, so the verdict is deterministic. Returns what the schema produced.
 */
export async function childInput(
  limits: InputLimits,
  flow: Pick<FlowDefinition<Json, Json, unknown>, 'name' | 'schemas'>,
  seq: number,
  input: Json,
): Promise<Json> {
  try {
    return await checkedFlowInput(limits, flow.schemas.input, input);
  } catch (err) {
    if (!(err instanceof EngineError) || err.code !== 'invalid_input') throw err;
    throw new EngineError('invalid_input', `child flow ${flow.name} (step ${seq}) was not started: ${err.message}`, {
      ...(err.field === null ? {} : { field: err.field }),
      cause: err,
    });
  }
}
