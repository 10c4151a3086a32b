import type { StandardSchemaResult, StandardSchemaV1 } from '../definitions/standard-schema.ts';
import { EngineError } from '../errors/engine-error.ts';

/**
 * Checks `value` against a declared schema and returns what the schema produced (defaults filled,
 * values coerced). Refused as `invalid_input` whose field is `field` and the path inside it the
 * validator reported, e.g. `input.amount: expected number, received string`: the caller names the
 * exact value to fix. Only the first issue is named, as the engine's other input guards do.
 */
export async function validateAgainstSchema(schema: StandardSchemaV1, value: unknown, field: string): Promise<unknown> {
  let result: StandardSchemaResult<unknown>;
  try {
    result = await schema['~standard'].validate(value);
  } catch (err) {
    // A validator that throws instead of reporting an issue still means "not valid input".
    const message = err instanceof Error ? err.message : String(err);
    throw new EngineError('invalid_input', `${field}: the schema's validator threw: ${message}`, { field, cause: err });
  }
  if (!result.issues) return result.value;
  const issue = result.issues[0];
  const path = [field, ...(issue?.path ?? []).map((s) => String(typeof s === 'object' ? s.key : s))].join('.');
  throw new EngineError('invalid_input', `${path}: ${issue?.message ?? 'invalid'}`, { field: path });
}
