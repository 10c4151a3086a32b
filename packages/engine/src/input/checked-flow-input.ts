import type { Json } from '../definitions/define-action.ts';
import type { StandardSchemaV1 } from '../definitions/standard-schema.ts';
import { assertStorableJson } from './assert-storable-json.ts';
import { jsonRules, type InputLimits } from './input-limits.ts';
import { validateAgainstSchema } from './validate-against-schema.ts';

/**
 * A flow's input as the flow's schema produced it (defaults filled), which is what is stored and
 * what every replay passes the flow; refused as `invalid_input` naming the path (`input.amount`)
 * before anything is written. A value the schema changed is checked storable again. A run started
 * by `startFlow` and a child started by `ctx.child` go through it alike.
 */
export async function checkedFlowInput(
  limits: InputLimits,
  schema: StandardSchemaV1 | undefined,
  input: Json,
): Promise<Json> {
  if (!schema) return input;
  const value = await validateAgainstSchema(schema, input, 'input');
  if (value !== input) assertStorableJson(value, 'input', jsonRules(limits, 'flow_input_bytes'));
  return value as Json;
}
