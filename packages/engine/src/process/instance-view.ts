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
}

export function toProcessInstance(row: DbSagaInstanceSummary, state: unknown): ProcessInstance {
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
  };
}
