import type { Json } from '../definitions/define-action.ts';
import type { DbFlowRun } from '../store/find-run.ts';
import type { RawDb } from '../db/raw-db.ts';
import { listActionRuns, type DbActionRun } from '../store/list-action-runs.ts';
import { listCompensationRuns, type DbCompensationRun } from '../store/list-compensation-runs.ts';
import { planRollback } from './plan-rollback.ts';
import type { RuntimeDeps } from './runtime-deps.ts';

/**
 * What a run closed without compensation (TimedOut, Terminated) leaves undone: its completed forward
 * steps whose compensation never ran. `source: 'plan'` when a replay that writes nothing (planRollback)
 * found the compensations the flow had registered: each step names its compensation. `source: 'record'`
 * when only the run's rows were read (a terminate, which does not run the flow's code under its locks;
 * a run whose code could not be replayed, and then `plan_error` says why): every completed forward step
 * without a completed compensation is listed, its compensation unknown (null). `in_flight` (ADR 0091):
 * the actions and compensations a worker held (Running) when the run was closed. Their rows stay as
 * they were and a late outcome is refused, so whether their effect happened is not known.
 */
export interface LeftUndone {
  source: 'plan' | 'record';
  steps: { sequence: number; name: string; compensation: string | null }[];
  plan_error?: string;
  in_flight?: InFlight[];
}

/** A step or compensation a worker held when its run was closed: it may have taken effect, or not. */
export interface InFlight {
  kind: 'action' | 'compensation';
  /** The forward step's sequence (for a compensation, the step it undoes). */
  sequence: number;
  name: string;
}

type StepRow = Pick<DbActionRun, 'sequence' | 'kind' | 'name' | 'status'>;
type CompensationRow = Pick<DbCompensationRun, 'action_sequence' | 'name' | 'status'>;

export async function findLeftUndone(deps: RuntimeDeps, run: DbFlowRun): Promise<LeftUndone> {
  const plan = await planRollback(deps, run, { timeoutMs: deps.config.monitor.expiration.plan_timeout_ms }).catch(
    (err: unknown) => ({ ok: false as const, error: { message: err instanceof Error ? err.message : String(err) } }),
  );
  const actions = await listActionRuns(deps.prisma, run.id);
  const compensations = await listCompensationRuns(deps.prisma, run.id);
  if (!plan.ok) return { ...leftUndoneOfRecord(actions, compensations), plan_error: plan.error.message };
  const nameOf = (sequence: number) => actions.find((a) => a.sequence === sequence)?.name ?? '?';
  return {
    source: 'plan',
    steps: plan.compensations.map((c) => ({
      sequence: c.actionSequence,
      name: nameOf(c.actionSequence),
      compensation: c.name,
    })),
    ...inFlightOf(actions, compensations),
  };
}

/**
 * What the run's rows say it leaves undone if it is closed now, without running its code: read in
 * the terminate's transaction, under the run's lock, so it is what the run had when it ended.
 */
export async function readLeftUndone(db: RawDb, runId: string): Promise<LeftUndone> {
  return leftUndoneOfRecord(await listActionRuns(db, runId), await listCompensationRuns(db, runId));
}

function leftUndoneOfRecord(actions: readonly StepRow[], compensations: readonly CompensationRow[]): LeftUndone {
  const compensated = new Set(compensations.filter((c) => c.status === 'Completed').map((c) => c.action_sequence));
  return {
    source: 'record',
    steps: actions
      .filter((a) => a.kind === 'action' && a.status === 'Completed' && !compensated.has(a.sequence))
      .map((a) => ({ sequence: a.sequence, name: a.name, compensation: null })),
    ...inFlightOf(actions, compensations),
  };
}

function inFlightOf(
  actions: readonly StepRow[],
  compensations: readonly CompensationRow[],
): Pick<LeftUndone, 'in_flight'> {
  const inFlight: InFlight[] = [
    ...actions
      .filter((a) => a.kind === 'action' && a.status === 'Running')
      .map((a) => ({ kind: 'action' as const, sequence: a.sequence, name: a.name })),
    ...compensations
      .filter((c) => c.status === 'Running')
      .map((c) => ({ kind: 'compensation' as const, sequence: c.action_sequence, name: c.name })),
  ];
  return inFlight.length > 0 ? { in_flight: inFlight } : {};
}

/** The left-undone list as JSON for the terminal event and the run's error. */
export function leftUndoneJson(l: LeftUndone): Json {
  return JSON.parse(JSON.stringify(l)) as Json;
}
