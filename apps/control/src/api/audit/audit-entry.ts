/** Where an audit entry comes from: the engine's repair commands, or the control plane's auth events. */
export type AuditSource = 'repair' | 'auth';

/** One line of the audit trail: a repair command or a sign-in / operator change, in one shape. */
export interface AuditEntry {
  /** `source:id`: unique across both tables, and the order ties on `at` are broken by. */
  key: string;
  source: AuditSource;
  id: string;
  at: string;
  actor: string;
  /** The repair command (`run.kick`, `instance.release`, ...) or the auth action (`sign_in`, ...). */
  action: string;
  /** run | step | instance | operator | null */
  targetType: string | null;
  targetId: string | null;
  /** The run a run or step target belongs to, for a link. */
  runId: string | null;
  instanceId: string | null;
  /** applied | conflict | refused (repairs); succeeded | refused | rate_limited ... (auth). */
  outcome: string;
  reason: string | null;
  address: string | null;
  /** A repair's expected and actual state, parameters and result; an auth event's details. */
  details: unknown;
}

export const auditKey = (source: AuditSource, id: string) => `${source}:${id}`;

/** The run a repair's target names: the run itself, or `runId#sequence` for a step. */
export function runOfTarget(targetType: string | null, targetId: string | null): string | null {
  if (targetId === null) return null;
  if (targetType === 'run') return targetId;
  if (targetType === 'step') return targetId.split('#')[0] ?? null;
  return null;
}
