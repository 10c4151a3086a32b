import type { StandardSchemaResult, StandardSchemaV1 } from '../definitions/standard-schema.ts';
import { EngineError } from '../errors/engine-error.ts';

/** A schema's verdict: the value it produced, or its first issue as the field path and its message. */
export type SchemaCheck = { ok: true; value: unknown } | { ok: false; field: string; message: string; cause?: unknown };

/**
 * Runs a declared schema (any Standard Schema validator) on `value`: the value it produced, or its
 * first issue with the path inside `field` (`message.payload.amount`). A validator that throws
 * instead of reporting an issue still means "not valid input". Only the first issue is named, as the
 * engine's other input guards do.
 */
export async function checkAgainstSchema(
  schema: StandardSchemaV1,
  value: unknown,
  field: string,
): Promise<SchemaCheck> {
  let result: StandardSchemaResult<unknown>;
  try {
    result = await schema['~standard'].validate(value);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { ok: false, field, message: `the schema's validator threw: ${message}`, cause: err };
  }
  if (!result.issues) return { ok: true, value: result.value };
  const issue = result.issues[0];
  const path = [field, ...(issue?.path ?? []).map((s) => String(typeof s === 'object' ? s.key : s))].join('.');
  return { ok: false, field: path, message: issue?.message ?? 'invalid' };
}

/**
 * Checks `value` against a declared schema and returns what the schema produced (defaults filled,
 * values coerced). Refused as `invalid_input` whose field is `field` and the path inside it the
 * validator reported, e.g. `input.amount: expected number, received string`: the caller names the
 * exact value to fix.
 */
export async function validateAgainstSchema(schema: StandardSchemaV1, value: unknown, field: string): Promise<unknown> {
  const checked = await checkAgainstSchema(schema, value, field);
  if (checked.ok) return checked.value;
  const { field: path, message, cause } = checked;
  throw new EngineError('invalid_input', `${path}: ${message}`, {
    field: path,
    ...(cause === undefined ? {} : { cause }),
  });
}
