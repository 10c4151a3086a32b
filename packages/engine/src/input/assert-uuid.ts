import { EngineError } from '../errors/engine-error.ts';
import { quoteForMessage } from './describe-bad-text.ts';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether the value is a uuid in its canonical text form (what the `uuid` columns take). */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && uuidPattern.test(value);
}

/**
 * Refuses a value that is not a uuid, as `invalid_input` naming the field, before it reaches a query.
 * Returns it in lower case, as PostgreSQL prints a uuid: an id given in upper case is the same id, and
 * whatever stores it as text (an approval's command, an audit row's target) must match `id::text`
 * (review 30: a pending approval in upper case did not hold its run against retention).
 */
export function assertUuid(value: unknown, field: string): string {
  if (isUuid(value)) return value.toLowerCase();
  const shown = typeof value === 'string' ? quoteForMessage(value) : typeof value;
  throw new EngineError('invalid_input', `${field}: must be a uuid, got ${shown}`, { field });
}
