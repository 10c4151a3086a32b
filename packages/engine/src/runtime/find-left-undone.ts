import type { Json } from '../definitions/define-action.ts';
import type { DbFlowRun } from '../store/find-run.ts';
import { listActionRuns } from '../store/list-action-runs.ts';
import { listCompensationRuns } from '../store/list-compensation-runs.ts';
import { planRollback } from './plan-rollback.ts';
import type { RuntimeDeps } from './runtime-deps.ts';

/**
 * What a run closed without compensation (TimedOut) leaves undone: its completed forward steps whose
 * compensation never ran. `source: 'plan'` when a replay that writes nothing (planRollback) found the
 * compensations the flow had registered: each step names its compensation. `source: 'record'` when
 * the code could not be replayed (a replay-blocked run, an unregistered flow): every completed
 * forward step without a completed compensation is listed, its compensation unknown (null), and
 * `plan_error` says why.
 */
export interface LeftUndone {
  source: 'plan' | 'record';
  steps: { sequence: number; name: string; compensation: string | null }[];
  plan_error?: string;
}

export async function findLeftUndone(deps: RuntimeDeps, run: DbFlowRun): Promise<LeftUndone> {
  const plan = await planRollback(deps, run, { timeoutMs: deps.config.monitor.expiration.plan_timeout_ms }).catch(
    (err: unknown) => ({ ok: false as const, error: { message: err instanceof Error ? err.message : String(err) } }),
  );
  const actions = await listActionRuns(deps.prisma, run.id);
  const nameOf = (sequence: number) => actions.find((a) => a.sequence === sequence)?.name ?? '?';
  if (plan.ok) {
    return {
      source: 'plan',
      steps: plan.compensations.map((c) => ({
        sequence: c.actionSequence,
        name: nameOf(c.actionSequence),
        compensation: c.name,
      })),
    };
  }
  const compensated = new Set(
    (await listCompensationRuns(deps.prisma, run.id))
      .filter((c) => c.status === 'Completed')
      .map((c) => c.action_sequence),
  );
  return {
    source: 'record',
    steps: actions
      .filter((a) => a.kind === 'action' && a.status === 'Completed' && !compensated.has(a.sequence))
      .map((a) => ({ sequence: a.sequence, name: a.name, compensation: null })),
    plan_error: plan.error.message,
  };
}

/** The left-undone list as JSON for the terminal event and the run's error. */
export function leftUndoneJson(l: LeftUndone): Json {
  return JSON.parse(JSON.stringify(l)) as Json;
}
