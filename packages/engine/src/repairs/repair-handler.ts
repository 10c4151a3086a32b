import type { Prisma } from '../generated/prisma/client.ts';
import type { ProcessDefinition } from '../process/define-process.ts';
import type { ProcessDeps } from '../process/process-deps.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import type { DbFlowRun } from '../store/find-run.ts';
import type { DbActionRun } from '../store/list-action-runs.ts';
import type { DbCompensationRun } from '../store/list-compensation-runs.ts';
import type { DbSagaInstance } from '../store/lock-saga-instance.ts';
import type { Db } from '../store/types.ts';
import type { RepairCommand } from './repair-command.ts';
import type { RepairEffects } from './repair-effects.ts';

/** What repairs need: the flow runtime and the process managers of one engine. */
export interface RepairDeps {
  runtime: RuntimeDeps;
  process: ProcessDeps;
}

/**
 * A run repair's target as read (and, in apply, locked): the run, and the step a step command names,
 * or the compensation a command on one names (`compensation` is absent unless the target names one).
 */
export interface RunTarget {
  run: DbFlowRun;
  step: DbActionRun | null;
  compensation?: DbCompensationRun | null;
}

/** An instance repair's target: the row and its definition (null when the process is not registered here). */
export interface InstanceTarget {
  row: DbSagaInstance;
  def: ProcessDefinition | null;
}

export interface RepairPlan {
  /** Why the command cannot act on the target as it is (empty: it can). */
  blockers: string[];
  /** The command field the first blocker is about (`target.stepSequence`), named in the refusal. */
  field?: string;
  effects: RepairEffects;
}

/**
 * One command of the catalogue. `plan` only reads, so the preview and the apply (under the lock, in
 * the repair's transaction) compute the same effects from the same state; `perform` then makes the
 * change through the engine's own in-transaction functions. `prepare` is for reads that cannot run
 * inside the repair's transaction (a replay that plans a rollback reads through the client).
 */
/**
 * Thrown by a handler's perform when what it prepared outside the transaction no longer matches the
 * target it finds locked inside (a step committed in between): `applyRepair` prepares again and
 * retries, and after a few tries answers a conflict (ADR 0085).
 */
export class PreparedStale extends Error {
  override readonly name = 'PreparedStale';
}

export interface RepairHandler<C extends RepairCommand, T, P = undefined> {
  prepare?: (deps: RepairDeps, cmd: C, target: T) => Promise<P>;
  /**
   * On a replay of the key after the command applied: finishes what its work after the commit left
   * undone (a terminate stopped between its batches, ADR 0126), as the command's audit row says it
   * (`reason` is the row's), and returns notes for the answer. Nothing else of the command acts again.
   */
  resume?: (deps: RepairDeps, cmd: C, applied: { reason: string }) => Promise<string[]>;
  plan: (db: Db, deps: RepairDeps, cmd: C, target: T, prepared: P) => Promise<RepairPlan>;
  perform: (
    tx: Prisma.TransactionClient,
    deps: RepairDeps,
    cmd: C,
    target: T,
    prepared: P,
    audit: { id: string; now: Date },
  ) => Promise<{
    effects?: RepairEffects;
    /** What follows the commit; notes it returns are added to the operator's answer (not to the audit row, written before it). */
    after?: () => Promise<void | string[]>;
  }>;
}
