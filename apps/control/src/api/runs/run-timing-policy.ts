import type { EngineConfig } from '@sagaflow/engine';

/**
 * Seed 000's four "how long before we act" dials as this control plane applies them, for the run
 * page. The run's own values (its business deadline, each step's reclaim threshold) are on the run
 * and its steps; these are the settings they fall back to and the ones that live only in config.
 */
export interface RunTimingPolicy {
  /** Deadlines given to runs and steps that set none (null = none); enforced by the monitor sweep. */
  deadlineDefaults: { runSeconds: number | null; actionSeconds: number | null; compensationSeconds: number | null };
  /** The engine's backstop: a run open this long is closed as TimedOut (null = none). */
  runTimeoutSeconds: number | null;
  /** The overlap lock per run/step: off, or its TTL. */
  lock: { enabled: boolean; ttlSeconds: number };
  /** The doctor's grace before a Pending step's job is presumed lost (only while the doctor is on). */
  repairGrace: { enabled: boolean; graceSeconds: number; redispatchStaleRunning: boolean };
  /** May a Running step be claimed again: the config a step without its own override inherits. */
  reclaim: {
    actions: { enabled: boolean; afterSeconds: number };
    compensations: { enabled: boolean; afterSeconds: number };
  };
}

export function runTimingPolicy(config: EngineConfig): RunTimingPolicy {
  const d = config.monitor.expiration.defaults;
  return {
    deadlineDefaults: { runSeconds: d.run, actionSeconds: d.action, compensationSeconds: d.compensation },
    runTimeoutSeconds: config.runs.default_timeout_seconds,
    lock: { enabled: config.locks.enabled, ttlSeconds: config.locks.action_ttl_seconds },
    repairGrace: {
      enabled: config.repair.enabled,
      graceSeconds: config.repair.grace_seconds,
      redispatchStaleRunning: config.repair.redispatch_stale_running_actions,
    },
    reclaim: {
      actions: { enabled: config.reclaim.actions.enabled, afterSeconds: config.reclaim.actions.after_seconds },
      compensations: {
        enabled: config.reclaim.compensations.enabled,
        afterSeconds: config.reclaim.compensations.after_seconds,
      },
    },
  };
}
