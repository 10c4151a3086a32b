import type { InstanceStatus, ProcessInstance } from '@sagaflow/engine';

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
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

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
  };
}
