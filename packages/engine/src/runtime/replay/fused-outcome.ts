import type { SqlDriver } from '../../db/database.ts';
import type { TransitionOutcome } from '../../store/step-transitions.ts';
import type { RuntimeDeps } from '../runtime-deps.ts';
import { outcomeEvent, outcomeOf, type PendingOutcome } from '../steps/pending-outcome.ts';
import type { ReplaySession } from './replay-session.ts';

/**
 * Whether this replay's next write may go out as ONE autocommitted statement (ADR 0042) instead of
 * its transaction: the driver's path (no host transaction, no `stepClaimed` hook, which takes a
 * Prisma transaction), no overlap locks (an outcome would release one), not a planning replay, no
 * ctx values waiting, and at most one buffered outcome, a completion of this run. Anything else
 * goes the multi-statement way, unchanged.
 */
export function canFuse(session: ReplaySession): boolean {
  const { deps } = session;
  return (
    deps.driver !== undefined &&
    !deps.hooks.stepClaimed &&
    !deps.config.locks.enabled &&
    !session.planOnly &&
    session.pendingValues.length === 0 &&
    session.pendingOutcomes.length <= 1 &&
    session.pendingOutcomes.every((o) => !o.failure && !o.lock && o.runId === session.runId)
  );
}

/** The fused statement's form of a buffered outcome: recordStepOutcome's fence and event. */
export function transitionOutcome(o: PendingOutcome | undefined): TransitionOutcome | undefined {
  if (!o) return undefined;
  return { table: o.table, id: o.rowId, attempts: o.attempts, outcome: outcomeOf(o), event: outcomeEvent(o) };
}

/** The deps of a session {@link canFuse} accepted: they carry the driver. */
export type FusableDeps = RuntimeDeps & { driver: SqlDriver };
