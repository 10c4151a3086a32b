import { EngineError } from '../errors/engine-error.ts';
import type { EngineConfig } from '../runtime/engine-config.ts';

/** What a caller may ask of a prune; absent values come from the `retention` settings. */
export interface PruneOptions {
  /** Rows older than this many seconds (by their finish, publication or receipt time) are pruned. */
  olderThanSeconds?: number;
  /** Runs (or transitions, outbox rows, inbox records) per batch; each batch is one transaction. */
  batchSize?: number;
}

export interface ResolvedPruneOptions {
  olderThanSeconds: number;
  batchSize: number;
}

function wholeNumber(field: keyof PruneOptions, value: unknown, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > max)
    throw new EngineError('invalid_input', `${field} must be a whole number from 1 to ${max}`, { field });
  return value;
}

/** Checks a caller's options before anything is read or deleted; a bad one names its field. */
export function resolvePruneOptions(
  options: PruneOptions | undefined,
  settings: EngineConfig['retention'],
): ResolvedPruneOptions {
  return {
    olderThanSeconds: wholeNumber(
      'olderThanSeconds',
      options?.olderThanSeconds ?? settings.older_than_seconds,
      10 * 365 * 86_400,
    ),
    batchSize: wholeNumber('batchSize', options?.batchSize ?? settings.batch_size, 10_000),
  };
}
