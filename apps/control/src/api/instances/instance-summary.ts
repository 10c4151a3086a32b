import type { FailingTimeout, InstanceStatus, ProcessInstance } from '@sagaflow/engine';

/** An instance as the API returns it: times as ISO strings, and never its decoded state (seed 002). */
export interface InstanceSummary {
  id: string;
  processName: string;
  correlationKey: string;
  status: InstanceStatus;
  currentState: string;
  version: number;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
  nextTimerDueAt: string | null;
  lastMessageId: string | null;
  failure: {
    redeliveryKey: string;
    position: string | null;
    errorType: string;
    message: string;
    messageType: string | null;
    firstFailedAt: string;
  } | null;
  /**
   * A timeout of the instance whose delivery keeps throwing (ADR 0127): it records nothing in
   * `failure` (seed 002) and never quarantines, so this says it. Null when no timeout is failing.
   */
  failingTimeout: FailingTimeoutSummary | null;
}

export interface FailingTimeoutSummary {
  timeoutId: string;
  name: string;
  attempts: number;
  /** Cut at 1,000 characters. */
  lastError: string;
  firstFailedAt: string | null;
  nextRetryAt: string | null;
  dueAt: string;
  /** How many of the instance's timeouts are failing; this is the one failing longest. */
  failingTimeouts: number;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toFailingTimeoutSummary(t: FailingTimeout | null | undefined): FailingTimeoutSummary | null {
  if (!t) return null;
  return {
    timeoutId: t.timeoutId,
    name: t.name,
    attempts: t.attempts,
    lastError: t.lastError,
    firstFailedAt: iso(t.firstFailedAt),
    nextRetryAt: iso(t.nextRetryAt),
    dueAt: t.dueAt.toISOString(),
    failingTimeouts: t.failingTimeouts,
  };
}

export function toInstanceSummary(i: ProcessInstance): InstanceSummary {
  return {
    id: i.id,
    processName: i.processName,
    correlationKey: i.correlationKey,
    status: i.status,
    currentState: i.currentState,
    version: i.version,
    createdAt: i.createdAt.toISOString(),
    updatedAt: i.updatedAt.toISOString(),
    completedAt: iso(i.completedAt),
    nextTimerDueAt: iso(i.nextTimerDueAt),
    lastMessageId: i.lastMessageId,
    failure: i.failure ? { ...i.failure, firstFailedAt: i.failure.firstFailedAt.toISOString() } : null,
    failingTimeout: toFailingTimeoutSummary(i.failingTimeout),
  };
}
