import type { DbFailingTimeout } from '../store/find-failing-timeouts.ts';
import type { DbSagaInstanceSummary } from '../store/find-saga-instance.ts';

export type InstanceStatus = 'ACTIVE' | 'COMPLETED' | 'QUARANTINED';
export const instanceStatuses: readonly InstanceStatus[] = ['ACTIVE', 'COMPLETED', 'QUARANTINED'];

/** What an instance is failing on (seed 002). Null on the instance when no failure is on record. */
export interface InstanceFailure {
  /** The failing message's id: what tells it apart from its own redelivery. */
  redeliveryKey: string;
  /** The feed's position for it, where the feed assigns one (as a decimal string). */
  position: string | null;
  errorType: string;
  /** Cut at 1,000 characters. */
  message: string;
  messageType: string | null;
  firstFailedAt: Date;
}

/**
 * A timeout of the instance whose delivery keeps throwing (ADR 0127). Seed 002's failure record
 * stays about messages (a failing timeout records nothing there and never quarantines); this says,
 * beside it, what the instance is failing on when a timeout is. Null once the timeout is delivered.
 */
export interface FailingTimeout {
  /** The timeout row's id (also its message id). */
  timeoutId: string;
  /** The timeout's name in the process definition. */
  name: string;
  /** Deliveries that threw so far. */
  attempts: number;
  /** The last one's error, cut at 1,000 characters. */
  lastError: string;
  /** When its delivery first threw (null for a timer that failed before this was recorded). */
  firstFailedAt: Date | null;
  /** When it is tried next: each delay doubles from `timeout_retry_seconds` up to `timeout_retry_max_seconds`. */
  nextRetryAt: Date | null;
  /** Its deadline: when it was first due. */
  dueAt: Date;
  /** How many of the instance's timeouts are failing (this one is the one failing longest). */
  failingTimeouts: number;
}

/** An instance for operators: status, where it is, how stale, and what it is failing on. */
export interface ProcessInstance {
  id: string;
  processName: string;
  correlationKey: string;
  status: InstanceStatus;
  currentState: string;
  /** Decoded data; null when listing (never read) or when the stored state no longer decodes. */
  state: unknown;
  version: number;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
  nextTimerDueAt: Date | null;
  lastMessageId: string | null;
  failure: InstanceFailure | null;
  /** A timeout that keeps failing, beside the failure record (ADR 0127); null when none is. */
  failingTimeout: FailingTimeout | null;
}

export function toFailingTimeout(t: DbFailingTimeout | undefined | null): FailingTimeout | null {
  if (!t) return null;
  return {
    timeoutId: t.id,
    name: t.name,
    attempts: t.attempts,
    lastError: t.last_error ?? '',
    firstFailedAt: t.first_failed_at,
    nextRetryAt: t.retry_at,
    dueAt: t.due_at,
    failingTimeouts: t.failing,
  };
}

export function toProcessInstance(
  row: DbSagaInstanceSummary,
  state: unknown,
  failingTimeout: DbFailingTimeout | null = null,
): ProcessInstance {
  const failure: InstanceFailure | null =
    row.failure_redelivery_key !== null && row.first_failed_at !== null
      ? {
          redeliveryKey: row.failure_redelivery_key,
          position: row.failure_position === null ? null : String(row.failure_position),
          errorType: row.failure_error_type ?? 'unknown',
          message: row.failure_message ?? '',
          messageType: row.failure_message_type,
          firstFailedAt: row.first_failed_at,
        }
      : null;
  return {
    id: row.id,
    processName: row.process_name,
    correlationKey: row.correlation_key,
    status: row.status,
    currentState: row.current_state,
    state,
    version: row.version,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    completedAt: row.completed_at,
    nextTimerDueAt: row.next_timer_due_at,
    lastMessageId: row.last_message_id,
    failure,
    failingTimeout: toFailingTimeout(failingTimeout),
  };
}
