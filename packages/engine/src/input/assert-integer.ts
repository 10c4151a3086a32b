import { EngineError } from '../errors/engine-error.ts';
import { describeType } from './assert-storable-text.ts';

/**
 * Refuses, as `invalid_input` naming the field, a value that is not an integer from `min` to `max`
 * (NaN, Infinity, a fraction, a string): for limits, intervals and counts given to the engine's API.
 */
export function assertInteger(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new EngineError(
      'invalid_input',
      `${field}: must be an integer from ${min} to ${max}, got ${typeof value === 'number' ? String(value) : describeType(value)}`,
      { field },
    );
  return value;
}
