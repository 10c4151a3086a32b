import type { Json } from '../definitions/define-action.ts';

/**
 * What a flow sees when a step failed for good (retries spent). Replay rethrows it from the record,
 * so a flow's catch block behaves the same on every replay.
 */
export class ActionFailedError extends Error {
  override readonly name = 'ActionFailedError';
  constructor(
    readonly actionName: string,
    readonly sequence: number,
    readonly recorded: Json,
  ) {
    super(`action ${actionName} (step ${sequence}) failed: ${describe(recorded)}`);
  }
}

function describe(recorded: Json): string {
  if (recorded && typeof recorded === 'object' && !Array.isArray(recorded) && typeof recorded.message === 'string') {
    return recorded.message;
  }
  return JSON.stringify(recorded);
}

/** Stores a thrown value as JSON, keeping what an operator needs to read it. */
export function serializeError(err: unknown): { name: string; message: string; stack?: string } {
  if (err instanceof Error) return { name: err.name, message: err.message, ...(err.stack ? { stack: err.stack } : {}) };
  return { name: 'NonError', message: String(err) };
}
