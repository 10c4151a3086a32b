import { EngineError } from '@sagaflow/engine';

/** What a refused repair's 409 carries, so a client can show the state now and draft again. */
export interface RepairErrorBody {
  /** The audit row that records the refusal. */
  repairId: string | null;
  /** The target's state when the repair was decided (run status and stuck reason, step, instance state and version). */
  current: unknown;
  /** The state the command was drafted against. */
  expected: unknown;
  /** Why the command cannot apply, besides a changed state. */
  blockers: string[];
}

/** The body of a repair_conflict or repair_refused error; null for any other error. */
export function repairErrorBody(cause: unknown): RepairErrorBody | null {
  if (!(cause instanceof EngineError)) return null;
  if (cause.code !== 'repair_conflict' && cause.code !== 'repair_refused') return null;
  const d = cause.details ?? {};
  return {
    repairId: typeof d.repairId === 'string' ? d.repairId : null,
    current: d.current ?? null,
    expected: d.expected ?? null,
    blockers: Array.isArray(d.blockers) ? d.blockers.filter((b): b is string => typeof b === 'string') : [],
  };
}
