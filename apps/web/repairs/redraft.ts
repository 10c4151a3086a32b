import { newKey, type DraftCommand } from './repair-draft-types';

const openRunStatuses = new Set(['Pending', 'Running', 'Waiting', 'Compensating']);

/** What the engine reports as the target's state now (a 409's `data.repair.current`, a preview's `actual`). */
export type CurrentState =
  | { exists: false }
  | {
      exists: true;
      runStatus?: string;
      stuckReason?: string | null;
      step?: { status: string; attempts: number } | null;
      state?: string;
      status?: string;
      version?: number;
      /** An outbox row's (with `status` and `attempts`). */
      outbox?: { type: string; destination: string };
      attempts?: number;
    };

/** The state now in a sentence: "Waiting", "Waiting, step 2 Running (attempt 1)", "ManualReview (version 4)". */
export function describeCurrent(current: CurrentState | null): string {
  if (!current) return 'unknown';
  if (!current.exists) return 'gone';
  if (current.outbox !== undefined) return `${current.status ?? '?'} after ${current.attempts ?? '?'} attempt(s)`;
  if (current.state !== undefined)
    return `${current.state}${current.status && current.status !== 'ACTIVE' ? ` (${current.status})` : ''}, version ${current.version ?? '?'}`;
  const step = current.step ? `, step ${current.step.status} after ${current.step.attempts} attempt(s)` : '';
  return `${current.runStatus ?? '?'}${current.stuckReason ? ` (stuck: ${current.stuckReason})` : ''}${step}`;
}

/**
 * The same command drafted against the state now, with a new idempotency key; null when it cannot
 * be (the target is gone or finished: a finished run is never changed).
 */
export function redraftAgainst(draft: DraftCommand, current: CurrentState | null): DraftCommand | null {
  if (!current?.exists) return null;
  // Only a Dead row can be requeued: a Pending or Published one has nothing to send again.
  if ('outboxId' in draft.target) {
    if (current.status !== 'Dead' || current.attempts === undefined) return null;
    return { ...draft, idempotencyKey: newKey(), expected: { status: current.status, attempts: current.attempts } };
  }
  if ('instanceId' in draft.target) {
    if (current.state === undefined || current.version === undefined) return null;
    return { ...draft, idempotencyKey: newKey(), expected: { state: current.state, version: current.version } };
  }
  if (current.runStatus === undefined || !openRunStatuses.has(current.runStatus)) return null;
  // A step's or a compensation's command is drafted against that row's state too.
  if (!('compensation' in draft.target) && draft.target.stepSequence === undefined)
    return { ...draft, idempotencyKey: newKey(), expected: { runStatus: current.runStatus } };
  if (!current.step) return null;
  return {
    ...draft,
    idempotencyKey: newKey(),
    expected: { runStatus: current.runStatus, stepStatus: current.step.status, stepAttempts: current.step.attempts },
  };
}
