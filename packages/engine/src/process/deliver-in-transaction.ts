import type { Json } from '../definitions/define-action.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { clearInstanceFailure } from '../store/clear-instance-failure.ts';
import { hasInboxMessage } from '../store/has-inbox-message.ts';
import { insertInboxMessage } from '../store/insert-inbox-message.ts';
import { insertProcessTransition } from '../store/insert-process-transition.ts';
import { insertSagaInstance } from '../store/insert-saga-instance.ts';
import { lockSagaInstance } from '../store/lock-saga-instance.ts';
import { refreshNextTimerDue } from '../store/refresh-next-timer-due.ts';
import { applyDecision } from './apply-decision.ts';
import { decide, type Decision, type IgnoreReason } from './decide.ts';
import { startsInstance, type ProcessDefinition } from './define-process.ts';
import { checkStateToStore, decodeStateOrThrow } from './decode-state.ts';
import type { ProcessDeps } from './process-deps.ts';

export type DeliverOutcome =
  /** The message moved the instance (state saved, commands queued). */
  | 'applied'
  /** Not valid in the instance's state (or a stale timeout): handled as a recorded no-op. */
  | 'ignored'
  /** Exact redelivery of a handled message id: nothing written. */
  | 'duplicate'
  /** The instance is quarantined: skipped (recorded in its history, not in the inbox). */
  | 'skipped_quarantined'
  /** It failed past the budget and the instance was quarantined on it; returned, not thrown. */
  | 'quarantined'
  /** No instance, and this message does not start one: nothing written. */
  | 'unroutable';

export interface DeliverResult {
  outcome: DeliverOutcome;
  instanceId: string | null;
  from?: string;
  to?: string;
  reason?: IgnoreReason;
  commands?: number;
}

/** A message the transaction delivers: a validated incoming one, or a timeout (which expects a state visit). */
export interface DeliverableMessage {
  id: string;
  type: string;
  payload: unknown;
  /**
   * The payload as its sender sent it, before the message's schema: what a kept message stores, so a
   * release parses it again (a schema may transform what it accepts). `payload` when not given.
   */
  received?: unknown;
  /** The sender's position of the message, kept with it when the instance is quarantined. */
  position?: bigint | null;
  expectedState?: string;
  armedVisit?: number;
}

/**
 * One delivery, inside the caller's transaction: create the instance if this message starts it, lock
 * it, check the inbox under the lock, skip a quarantined instance, decide, and write the decision (or
 * the recorded no-op). Throws whatever the definition's code or the store throws: the caller rolls back.
 */
export async function deliverInTransaction(
  tx: Prisma.TransactionClient,
  deps: ProcessDeps,
  def: ProcessDefinition,
  message: DeliverableMessage,
  target: { key: string } | { id: string },
): Promise<DeliverResult> {
  const now = deps.clock.now();
  if ('key' in target && startsInstance(def, message.type)) {
    const initialData = def.initialData(target.key);
    // An instance is never created with data its own schema refuses (it could never be decoded).
    checkStateToStore(def, initialData, `for key "${target.key}"`, def.initial);
    await insertSagaInstance(tx, {
      processName: def.name,
      key: target.key,
      state: def.initial,
      data: initialData,
      now,
    });
  }
  const row = await lockSagaInstance(tx, 'key' in target ? { processName: def.name, key: target.key } : target);
  if (!row || row.process_name !== def.name) return { outcome: 'unroutable', instanceId: null };
  await deps.faults.afterLock?.({ instanceId: row.id, messageId: message.id });
  if (await hasInboxMessage(tx, { consumer: def.name, messageId: message.id })) {
    return { outcome: 'duplicate', instanceId: row.id };
  }
  if (row.status === 'QUARANTINED') {
    // Not an inbox row: after a release, this message's redelivery must still be applied.
    await insertProcessTransition(tx, {
      instanceId: row.id,
      processName: row.process_name,
      from: row.current_state,
      to: row.current_state,
      messageId: message.id,
      messageType: message.type,
      outcome: 'skipped_quarantined',
      // Kept, not lost: a release applies it, in arrival order, after the message the instance stopped
      // on. A timeout is not kept here: its row stays Pending and fires on the next sweep after release.
      detail:
        message.expectedState === undefined
          ? {
              stoppedOn: row.failure_redelivery_key,
              payload: (message.received === undefined ? message.payload : message.received) as Json,
              ...(message.position === undefined || message.position === null
                ? {}
                : { position: String(message.position) }),
            }
          : { stoppedOn: row.failure_redelivery_key },
      now,
    });
    return { outcome: 'skipped_quarantined', instanceId: row.id, from: row.current_state, to: row.current_state };
  }
  // A timeout of a visit the instance has left is a no-op whatever its data holds (ADR 0012): judged before
  // the state is decoded, so the stale timeout of an instance whose stored state a new deployment no longer
  // decodes is delivered as such instead of failing at every try (review 61).
  const stale =
    message.expectedState !== undefined &&
    (message.expectedState !== row.current_state ||
      (message.armedVisit !== undefined && message.armedVisit !== row.state_visit));
  const decision: Decision = stale
    ? { kind: 'ignored', state: row.current_state, reason: 'stale_timeout' }
    : decide(
        def,
        { state: row.current_state, data: decodeStateOrThrow(def, row.state, row.id), visit: row.state_visit },
        {
          type: message.type,
          payload: message.payload,
          ...(message.expectedState === undefined ? {} : { expectedState: message.expectedState }),
          ...(message.armedVisit === undefined ? {} : { armedVisit: message.armedVisit }),
        },
        { key: row.correlation_key },
      );
  if (decision.kind === 'ignored') {
    await insertInboxMessage(tx, {
      consumer: def.name,
      messageId: message.id,
      messageType: message.type,
      instanceId: row.id,
      now,
    });
    await insertProcessTransition(tx, {
      instanceId: row.id,
      processName: row.process_name,
      from: row.current_state,
      to: row.current_state,
      messageId: message.id,
      messageType: message.type,
      outcome: 'ignored',
      detail: { reason: decision.reason },
      now,
    });
    await clearInstanceFailure(tx, { id: row.id, messageId: message.id, now });
    // A timeout delivered as a no-op (its guard rejected it) is no longer the instance's next timer.
    if (message.expectedState !== undefined)
      await refreshNextTimerDue(tx, { id: row.id, deliveredTimeoutId: message.id });
    return {
      outcome: 'ignored',
      instanceId: row.id,
      from: row.current_state,
      to: row.current_state,
      reason: decision.reason,
    };
  }
  await applyDecision(tx, deps, def, row, message, decision, { outcome: 'applied', detail: null });
  return {
    outcome: 'applied',
    instanceId: row.id,
    from: decision.from,
    to: decision.to,
    commands: decision.commands.length,
  };
}
