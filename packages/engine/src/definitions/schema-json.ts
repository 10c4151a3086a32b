import type { StandardSchemaV1 } from './standard-schema.ts';

/**
 * The JSON Schema of what a schema accepts, for a form; null when the validator has no Standard JSON
 * Schema converter or cannot express this schema (a transform, a refinement in code). A form then
 * falls back to a raw JSON editor, and the engine still validates whatever is sent.
 */
export function schemaJson(schema: StandardSchemaV1 | undefined): Record<string, unknown> | null {
  const convert = schema?.['~standard'].jsonSchema;
  if (!convert) return null;
  try {
    return convert.input({ target: 'draft-2020-12' });
  } catch {
    return null;
  }
}
