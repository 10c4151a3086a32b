import type { Json } from '../definitions/define-action.ts';
import type { DbFlowRun } from '../store/find-run.ts';
import type { RawDb } from '../db/raw-db.ts';
import { listActionRuns, type DbActionRun } from '../store/list-action-runs.ts';
import { listCompensationRuns, type DbCompensationRun } from '../store/list-compensation-runs.ts';
import { planRollback, type RollbackPlan } from './plan-rollback.ts';
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
  /**
   * A run whose rollback stopped (ADR 0124): the compensation whose failure stopped it, named. The
   * completed steps it and the compensations after it did not undo are in `steps`, each with its
   * compensation.
   */
  compensation_failed?: { sequence: number; name: string; message: string };
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

/** The plan half of a left-undone list: a replay that writes nothing, run before the run is locked. */
export type LeftUndonePlan = RollbackPlan;

/**
 * Replays the run without writing (planRollback) to name the compensations it registered. Run it
 * before the transaction that closes the run: it runs the flow's code, which must not hold the run's
 * lock. {@link readLeftUndone} then reads the rows under the lock and keeps the names that still hold.
 */
export async function planLeftUndone(deps: RuntimeDeps, run: DbFlowRun): Promise<LeftUndonePlan> {
  return planRollback(deps, run, { timeoutMs: deps.config.monitor.expiration.plan_timeout_ms }).catch(
    (err: unknown) => ({
      ok: false as const,
      error: { name: 'PlanFailed', message: err instanceof Error ? err.message : String(err) },
    }),
  );
}

/**
 * What the run leaves undone if it is closed now, from its rows: read it in the transaction that
 * closes the run, under the run's lock, so it is what the run had when it ended (a step completing
 * meanwhile is waited for, then read). With a `plan` made before the lock ({@link planLeftUndone}),
 * each step still undone is named by the compensations the plan found for it and that have not
 * completed since; a step that completed after the plan's read is listed with its compensation
 * unknown; a step the plan read as completed and registered nothing for is not listed (nothing to
 * undo). Without a plan, or when it failed (`plan_error`), every completed step still undone is listed.
 */
export async function readLeftUndone(db: RawDb, runId: string, plan?: LeftUndonePlan): Promise<LeftUndone> {
  const actions = await listActionRuns(db, runId);
  const compensations = await listCompensationRuns(db, runId);
  const record = leftUndoneOfRecord(actions, compensations);
  if (!plan) return record;
  if (!plan.ok) return { ...record, plan_error: plan.error.message };
  const done = new Set(
    compensations.filter((c) => c.status === 'Completed').map((c) => `${c.action_sequence}:${c.name}`),
  );
  const planned = new Set(plan.completedSteps);
  const steps = record.steps.flatMap((step) => {
    const named = plan.compensations.filter(
      (c) => c.actionSequence === step.sequence && !done.has(`${c.actionSequence}:${c.name}`),
    );
    if (named.length > 0) return named.map((c) => ({ ...step, compensation: c.name }));
    return planned.has(step.sequence) ? [] : [step];
  });
  return { ...record, source: 'plan', steps };
}

/**
 * A completed forward action is undone unless its compensations ran: every compensation row with its
 * sequence Completed. A rollback level writes all its rows when it starts (compensate-step.ts), so a
 * row still Pending, Running or Failed there means something registered for that step has not run,
 * even when another compensation carrying the same sequence (ctx.addCompensation after it) completed.
 */
function leftUndoneOfRecord(actions: readonly StepRow[], compensations: readonly CompensationRow[]): LeftUndone {
  const undone = new Set(compensations.filter((c) => c.status !== 'Completed').map((c) => c.action_sequence));
  const compensated = new Set(
    compensations.filter((c) => !undone.has(c.action_sequence)).map((c) => c.action_sequence),
  );
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

/**
 * What a run whose rollback stopped (a compensation failed, or did not finish) leaves undone, from its
 * rows, read in the transaction that closes it under the run's lock (ADR 0124): every completed forward
 * step still undone, named by each compensation of it that did not complete (the one that failed, and
 * those that never ran); the failed compensation on its own (`compensation_failed`); the steps in flight.
 */
export async function readLeftUndoneOfRollback(db: RawDb, runId: string): Promise<LeftUndone> {
  const actions = await listActionRuns(db, runId);
  const compensations = await listCompensationRuns(db, runId);
  const record = leftUndoneOfRecord(actions, compensations);
  const open = compensations.filter((c) => c.status !== 'Completed');
  const steps = record.steps.flatMap((step) => {
    const named = open.filter((c) => c.action_sequence === step.sequence);
    return named.length > 0 ? named.map((c) => ({ ...step, compensation: c.name })) : [step];
  });
  // The newest failure stopped the rollback: the last level's Errored row.
  const failed = compensations
    .filter((c) => c.status === 'Errored')
    .sort((a, b) => b.rollback_level - a.rollback_level || a.ordinal - b.ordinal)[0];
  return {
    ...record,
    steps,
    ...(failed
      ? {
          compensation_failed: {
            sequence: failed.action_sequence,
            name: failed.name,
            message: errorMessageOf(failed.error),
          },
        }
      : {}),
  };
}

function errorMessageOf(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'message' in error) return String(error.message);
  return JSON.stringify(error ?? null);
}

/** The left-undone list as JSON for the terminal event and the run's error. */
export function leftUndoneJson(l: LeftUndone): Json {
  return JSON.parse(JSON.stringify(l)) as Json;
}
