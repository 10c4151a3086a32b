import { EngineError } from '../errors/engine-error.ts';
import { findRun } from '../store/find-run.ts';
import { lockOpenRun } from '../store/lock-open-run.ts';
import { lockSagaInstance, readSagaInstance } from '../store/lock-saga-instance.ts';
import { lockStepRow } from '../store/repairs/lock-step-row.ts';
import type { Db } from '../store/types.ts';
import type { InstanceRepairCommand, RepairCommand, RunRepairCommand } from './repair-command.ts';
import type { RepairActualState } from './repair-effects.ts';
import type { InstanceTarget, RepairDeps, RepairHandler, RunTarget } from './repair-handler.ts';
import { instanceRepairHandlers, runRepairHandlers } from './repair-handlers.ts';

/**
 * Reads a run repair's target. With `lock` (apply, inside its transaction) the run row is taken FOR
 * UPDATE first, the lock of the run's terminal transition (lockOpenRun, ADR 0011): every claim,
 * outcome, signal, kick, sweep and replay write holds it FOR KEY SHARE or FOR NO KEY UPDATE, so
 * none of them commits between the repair's check of the expected state and its commit. Then the
 * named step's row, FOR UPDATE. A finished run is not locked: nothing changes it any more.
 */
export async function readRunTarget(db: Db, cmd: RunRepairCommand, lock: boolean): Promise<RunTarget> {
  const runId = cmd.target.runId;
  if (lock) await lockOpenRun(db, runId, 'update');
  const run = await findRun(db, runId);
  if (!run) throw new EngineError('run_not_found', `run ${runId} does not exist`);
  if (!('stepSequence' in cmd.target)) return { run, step: null };
  const sequence = cmd.target.stepSequence;
  const step = lock
    ? await lockStepRow(db, runId, sequence)
    : await db.actionRun.findUnique({ where: { run_id_sequence: { run_id: runId, sequence } } });
  return { run, step };
}

/**
 * Reads an instance repair's target. With `lock`, FOR UPDATE: the lock deliver() takes for every
 * message of the instance; the version it reads is the one deliver()'s save compares and swaps.
 */
export async function readInstanceTarget(
  db: Db,
  deps: RepairDeps,
  cmd: InstanceRepairCommand,
  lock: boolean,
): Promise<InstanceTarget> {
  const id = cmd.target.instanceId;
  const row = lock ? await lockSagaInstance(db, { id }) : await readSagaInstance(db, { id });
  if (!row) throw new EngineError('instance_not_found', `no instance ${id}`);
  return { row, def: deps.process.definitions.get(row.process_name) ?? null };
}

export function runActual(target: RunTarget, cmd: RunRepairCommand): RepairActualState {
  const { run, step } = target;
  return {
    exists: true,
    runStatus: run.status,
    stuckReason: run.stuck_reason,
    ...('stepSequence' in cmd.target
      ? { step: step ? { status: step.status, attempts: step.attempts, kind: step.kind, name: step.name } : null }
      : {}),
  };
}

export function instanceActual(target: InstanceTarget): RepairActualState {
  const { row } = target;
  return {
    exists: true,
    processName: row.process_name,
    status: row.status,
    state: row.current_state,
    version: row.version,
  };
}

/** Whether the state the command was drafted against is the state found. */
export function expectationHolds(cmd: RepairCommand, actual: RepairActualState): boolean {
  if (!actual.exists) return false;
  if ('instanceId' in cmd.target) {
    const e = cmd.expected as { state: string; version: number };
    return 'version' in actual && actual.state === e.state && actual.version === e.version;
  }
  if (!('runStatus' in actual)) return false;
  const e = cmd.expected as { runStatus: string; stepStatus?: string; stepAttempts?: number };
  if (actual.runStatus !== e.runStatus) return false;
  if (e.stepStatus === undefined) return true;
  return (
    actual.step !== undefined &&
    actual.step !== null &&
    actual.step.status === e.stepStatus &&
    actual.step.attempts === e.stepAttempts
  );
}

/**
 * The command's handler, its target read (and locked, with `lock`) and the state found: what both
 * preview and apply start from.
 */
export async function readRepairTarget(db: Db, deps: RepairDeps, cmd: RepairCommand, lock: boolean) {
  const isRun = 'runId' in cmd.target;
  const handler = (isRun ? runRepairHandlers[cmd.kind] : instanceRepairHandlers[cmd.kind]) as
    RepairHandler<RepairCommand, unknown, unknown> | undefined;
  if (!handler) throw new EngineError('invalid_input', `kind: "${cmd.kind}" has no handler`, { field: 'kind' });
  const target: RunTarget | InstanceTarget = isRun
    ? await readRunTarget(db, cmd as RunRepairCommand, lock)
    : await readInstanceTarget(db, deps, cmd as InstanceRepairCommand, lock);
  const actual = isRun
    ? runActual(target as RunTarget, cmd as RunRepairCommand)
    : instanceActual(target as InstanceTarget);
  return { handler, target, actual };
}
