import type { Json } from '../definitions/define-action.ts';
import { describeType } from '../input/assert-storable-text.ts';
import { toStorableDiagnostic } from '../input/to-storable-diagnostic.ts';

export type FlowErrorCode =
  /** A step failed for good (retries spent, or not retryable). */
  | 'action_failed'
  /** Cancellation was requested; catch it to clean up (compensate) within the cleanup window. */
  | 'cancelled'
  /** The run's business deadline passed and the monitor expired it; compensate, as for a cancellation. */
  | 'expired'
  /** A compensation failed and continue-with-error was off. */
  | 'compensation_failed'
  /** A rollback level ended with a compensation that did not finish (expired or cancelled under it). */
  | 'compensation_unfinished'
  /** A child flow ended without completing. */
  | 'child_failed';

/**
 * What a flow's code sees when something it awaited did not succeed. Replay rethrows it from the
 * record, so a flow's catch block behaves the same on every replay.
 */
export class FlowError extends Error {
  override readonly name = 'FlowError';
  constructor(
    readonly code: FlowErrorCode,
    message: string,
    /** The recorded error(s) behind it, as stored. */
    readonly recorded: Json = null,
    readonly sequence: number | null = null,
  ) {
    super(message);
  }
}

export function isFlowError(err: unknown, code?: FlowErrorCode): err is FlowError {
  return err instanceof FlowError && (code === undefined || err.code === code);
}

/** Stores a thrown value as JSON, keeping what an operator needs to read it. */
/** An error as a step's or run's record keeps it; its text made storable (see toStorableDiagnostic). */
export function serializeError(err: unknown): { name: string; message: string; code?: string; stack?: string } {
  const t = toStorableDiagnostic;
  // Never throws: it runs in the catch that records a failure, and a throw there left the step
  // Running (review 35). A getter or a Proxy trap that throws falls back to the value's description.
  try {
    if (err instanceof FlowError) return { name: t(err.name), code: err.code, message: t(err.message) };
    if (err instanceof Error)
      return {
        name: t(asText(err.name)),
        message: t(asText(err.message)),
        ...(err.stack ? { stack: t(asText(err.stack)) } : {}),
      };
  } catch {
    // described below, as any other thrown value
  }
  return { name: 'NonError', message: t(asText(err)) };
}

/** String(value), or what the value is when String() throws (a null-prototype object, a throwing toString). */
function asText(value: unknown): string {
  try {
    return String(value);
  } catch {
    try {
      return `[${describeType(value)} without a usable toString]`;
    } catch {
      return '[a value without a usable toString]';
    }
  }
}

export function recordedMessage(recorded: Json): string {
  if (recorded && typeof recorded === 'object' && !Array.isArray(recorded) && typeof recorded.message === 'string') {
    return recorded.message;
  }
  return JSON.stringify(recorded);
}
