import { EngineError } from '../errors/engine-error.ts';

/** The longest duration the engine accepts anywhere (ten years), as its config does. */
export const maxSeconds = 10 * 365 * 86_400;

/**
 * Refuses a duration outside (0, ten years], as `invalid_input` naming the field and the range:
 * `expiresInSeconds: 1e13` would otherwise make a date PostgreSQL cannot store.
 */
export function assertSeconds(value: unknown, field: string): number {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= maxSeconds) return value;
  const shown = typeof value === 'number' ? String(value) : typeof value;
  throw new EngineError(
    'invalid_input',
    `${field}: must be a number of seconds greater than 0 and at most ${maxSeconds} (ten years), got ${shown}`,
    { field },
  );
}
