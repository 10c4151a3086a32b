import type { Json } from '../definitions/define-action.ts';
import type { DbActionRun } from '../store/list-action-runs.ts';
import type { DbCompensationRun } from '../store/list-compensation-runs.ts';
import type { DbFlowRun } from '../store/find-run.ts';
import type { DbRunAnomaly } from '../store/history/list-run-anomalies.ts';
import type { RepairKind } from '../repairs/repair-command.ts';
import { safeRepairsFor } from '../repairs/safe-repairs.ts';
import type { LeftUndone } from './find-left-undone.ts';

/** A run as the control plane and console see it (domain type, apart from the row type). */
export interface RunView {
  id: string;
  flowName: string;
  flowVersion: number;
  status: string;
  stuckReason: string | null;
  waitingFor: string | null;
  cancelRequestedAt: string | null;
  cancelReason: string | null;
  parentRunId: string | null;
  expiresAt: string | null;
  runTimeoutAt: string | null;
  businessKey: string | null;
  tags: string[];
  input: Json;
  output: Json;
  error: Json;
  createdAt: string;
  updatedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /**
   * What the run ended without undoing (a TimedOut run is closed without compensation): its completed
   * forward steps whose compensation never ran. Null when the run did not end that way.
   */
  leftUndone: LeftUndone | null;
  /** The repairs safe for the run as it is (by its status and stuck reason; ADR 0016); none once finished. */
  safeRepairs: RepairKind[];
}

export interface ActionView {
  id: string;
  sequence: number;
  /** action | value | signal | timer | child | cancel */
  kind: string;
  name: string;
  status: string;
  attempts: number;
  maxAttempts: number;
  input: Json;
  output: Json;
  error: Json;
  reclaimStaleAfterSeconds: number | null;
  reclaimStaleAt: string | null;
  expiresAt: string | null;
  wakeAt: string | null;
  parallelBlock: number | null;
  startedAt: string | null;
  finishedAt: string | null;
}

export interface CompensationView {
  id: string;
  actionSequence: number;
  rollbackLevel: number;
  /** Its position in the rollback level: with the level, what a repair names it by. */
  ordinal: number;
  name: string;
  status: string;
  attempts: number;
  maxAttempts: number;
  input: Json;
  output: Json;
  error: Json;
  reclaimStaleAfterSeconds: number | null;
  startedAt: string | null;
  finishedAt: string | null;
}

export interface AnomalyView {
  id: string;
  code: string;
  message: string;
  sequence: number | null;
  name: string | null;
  at: string;
}

export interface FlowEventView {
  id: string;
  type: string;
  sequence: number | null;
  data: Json;
  at: string;
}

export interface RunDetail {
  run: RunView;
  actions: ActionView[];
  compensations: CompensationView[];
  events: FlowEventView[];
  anomalies: AnomalyView[];
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function toRunView(r: DbFlowRun): RunView {
  return {
    id: r.id,
    flowName: r.flow_name,
    flowVersion: r.flow_version,
    status: r.status,
    stuckReason: r.stuck_reason,
    waitingFor: r.waiting_for,
    cancelRequestedAt: iso(r.cancel_requested_at),
    cancelReason: r.cancel_reason,
    parentRunId: r.parent_run_id,
    expiresAt: iso(r.expires_at),
    runTimeoutAt: iso(r.run_timeout_at),
    businessKey: r.business_key,
    tags: r.tags,
    input: r.input as Json,
    output: (r.output ?? null) as Json,
    error: (r.error ?? null) as Json,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    startedAt: iso(r.started_at),
    finishedAt: iso(r.finished_at),
    leftUndone: leftUndoneOf(r.error),
    safeRepairs: safeRepairsFor({ status: r.status, stuckReason: r.stuck_reason }),
  };
}

function leftUndoneOf(error: unknown): LeftUndone | null {
  if (typeof error !== 'object' || error === null || !('left_undone' in error)) return null;
  return error.left_undone as LeftUndone;
}

export function toActionView(a: DbActionRun): ActionView {
  return {
    id: a.id,
    sequence: a.sequence,
    kind: a.kind,
    name: a.name,
    status: a.status,
    attempts: a.attempts,
    maxAttempts: a.max_attempts,
    input: a.input as Json,
    output: (a.output ?? null) as Json,
    error: (a.error ?? null) as Json,
    reclaimStaleAfterSeconds: a.reclaim_stale_after_seconds,
    reclaimStaleAt: iso(a.reclaim_stale_at),
    expiresAt: iso(a.expires_at),
    wakeAt: iso(a.wake_at),
    parallelBlock: a.parallel_block,
    startedAt: iso(a.started_at),
    finishedAt: iso(a.finished_at),
  };
}

export function toCompensationView(c: DbCompensationRun): CompensationView {
  return {
    id: c.id,
    actionSequence: c.action_sequence,
    rollbackLevel: c.rollback_level,
    ordinal: c.ordinal,
    name: c.name,
    status: c.status,
    attempts: c.attempts,
    maxAttempts: c.max_attempts,
    input: c.input as Json,
    output: (c.output ?? null) as Json,
    error: (c.error ?? null) as Json,
    reclaimStaleAfterSeconds: c.reclaim_stale_after_seconds,
    startedAt: iso(c.started_at),
    finishedAt: iso(c.finished_at),
  };
}

export function toFlowEventView(e: {
  id: bigint;
  type: string;
  sequence: number | null;
  data: unknown;
  at: Date;
}): FlowEventView {
  return { id: String(e.id), type: e.type, sequence: e.sequence, data: e.data as Json, at: e.at.toISOString() };
}

export function toAnomalyView(a: DbRunAnomaly): AnomalyView {
  return {
    id: String(a.id),
    code: a.code,
    message: a.message,
    sequence: a.sequence,
    name: a.name,
    at: a.at.toISOString(),
  };
}
