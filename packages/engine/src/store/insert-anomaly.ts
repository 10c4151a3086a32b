import type { Json } from '../definitions/define-action.ts';
import type { Db } from './types.ts';

/**
 * Seed 000's eleven reason codes (races and engine faults), a run nearing its step limit (ADR 0125),
 * a process timeout that started failing (ADR 0127), deliveries to a held instance (review 55) and a
 * run the monitor keeps finding held (ADR 0137): journaled apart from flow_events.
 */
export const anomalyCodes = [
  'claim_lost',
  'outcome_rejected',
  'batch_finished_early',
  'claim_not_committed',
  'expiry_failed',
  'write_refused',
  'rejection_undelivered',
  'transition_lost',
  'retry_policy_threw',
  'replan_failed',
  'replan_incomplete',
  /** A run started the step at `limits.steps_per_run_warning_fraction` of `limits.max_steps_per_run` (ADR 0125). */
  'run_step_limit_near',
  /**
   * A process timeout's delivery threw for the first time (ADR 0127): one entry per timeout, naming
   * the instance, the timeout and the error, not one per attempt. It stays Pending and is retried.
   */
  'process_timeout_failing',
  /**
   * Deliveries to a process instance gave up because another session held its row (ADR 0131 §4): one
   * entry per instance per minute at most, naming it and the message; nothing was written (review 55).
   */
  'process_delivery_held_up',
  /**
   * The monitor found a run's row (or a step's, a child's) held by another session at each sweep for a
   * minute (ADR 0137): it could not expire it, judge it or reclaim its step, and nothing was written.
   * One entry per run per ten minutes at most, naming the sweep and what to do.
   */
  'run_held',
] as const;
export type AnomalyCode = (typeof anomalyCodes)[number];

export interface Anomaly {
  code: AnomalyCode;
  message: string;
  runId?: string;
  rowId?: string;
  sequence?: number;
  name?: string;
  site?: string;
  details?: Record<string, Json>;
}

export async function insertAnomaly(db: Db, a: Anomaly): Promise<void> {
  await db.anomalyLog.create({
    data: {
      code: a.code,
      message: a.message,
      run_id: a.runId ?? null,
      row_id: a.rowId ?? null,
      sequence: a.sequence ?? null,
      name: a.name ?? null,
      site: a.site ?? null,
      details: (a.details ?? {}) as never,
    },
  });
}
