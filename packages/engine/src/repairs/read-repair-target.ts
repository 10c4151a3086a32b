import { EngineError } from '../errors/engine-error.ts';
import { findRun } from '../store/find-run.ts';
import { lockOpenRun } from '../store/lock-open-run.ts';
import { lockOpenTree } from '../store/lock-open-tree.ts';
import { lockSagaInstance, readSagaInstance } from '../store/lock-saga-instance.ts';
import { lockCompensationRow } from '../store/repairs/lock-compensation-row.ts';
import { lockStepRow } from '../store/repairs/lock-step-row.ts';
import { findOutboxRow } from '../store/outbox/find-outbox-row.ts';
import type { Db } from '../store/types.ts';
import type { InstanceRepairCommand, OutboxRepairCommand, RepairCommand, RunRepairCommand } from './repair-command.ts';
import type { RepairActualState } from './repair-effects.ts';
import type { OutboxTarget } from './outbox-repairs.ts';
import type { InstanceTarget, RepairDeps, RepairHandler, RunTarget } from './repair-handler.ts';
import { instanceRepairHandlers, outboxRepairHandlers, runRepairHandlers } from './repair-handlers.ts';

/**
 * Reads a run repair's target. With `lock` (apply, inside its transaction) the run row is taken FOR
 * UPDATE first, the lock of the run's terminal transition (lockOpenRun, ADR 0011): every claim,
 * outcome, signal, kick, sweep and replay write holds it FOR KEY SHARE or FOR NO KEY UPDATE, so
 * none of them commits between the repair's check of the expected state and its commit. Then the
 * named step's (or compensation's) row, FOR UPDATE. A finished run is not locked: nothing changes
 * it any more. A terminate reaches the run's open 'propagate' tree: its runs are locked first, the
 * deepest first and the run itself last (ADR 0089), so its plan sees the tree it ends.
 */
export async function readRunTarget(db: Db, cmd: RunRepairCommand, lock: boolean): Promise<RunTarget> {
  const runId = cmd.target.runId;
  if (lock && cmd.kind === 'run.terminate') await lockOpenTree(db, runId);
  if (lock) await lockOpenRun(db, runId, 'update');
  const run = await findRun(db, runId);
  if (!run) throw new EngineError('run_not_found', `run ${runId} does not exist`);
  if ('compensation' in cmd.target) {
    const at = cmd.target.compensation;
    const compensation = lock
      ? await lockCompensationRow(db, runId, at)
      : await db.compensationRun.findUnique({
          where: {
            run_id_rollback_level_ordinal: { run_id: runId, rollback_level: at.rollbackLevel, ordinal: at.ordinal },
          },
        });
    return { run, step: null, compensation };
  }
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

/**
 * Reads an outbox repair's target. With `lock`, FOR UPDATE: the row lock every write of the
 * publisher to the row takes (its claim with SKIP LOCKED, so a claim passes the row over instead of
 * waiting; findOutboxRow).
 */
export async function readOutboxTarget(db: Db, cmd: OutboxRepairCommand, lock: boolean): Promise<OutboxTarget> {
  const id = cmd.target.outboxId;
  const row = await findOutboxRow(db, id, { lock });
  if (!row) throw new EngineError('outbox_not_found', `no outbox row ${id}`);
  return { row };
}

export function outboxActual(target: OutboxTarget): RepairActualState {
  const { row } = target;
  return {
    exists: true,
    outbox: { type: row.type, destination: row.destination, sourceKind: row.source_kind, sourceId: row.source_id },
    status: row.status,
    attempts: row.attempts,
  };
}

/** The run's state, and the targeted step's or compensation's (a compensation reads as kind `compensation`). */
export function runActual(target: RunTarget, cmd: RunRepairCommand): RepairActualState {
  const { run, step, compensation } = target;
  const row =
    'compensation' in cmd.target
      ? compensation
        ? {
            status: compensation.status,
            attempts: compensation.attempts,
            kind: 'compensation',
            name: compensation.name,
          }
        : null
      : step
        ? { status: step.status, attempts: step.attempts, kind: step.kind, name: step.name }
        : null;
  return {
    exists: true,
    runStatus: run.status,
    stuckReason: run.stuck_reason,
    ...('stepSequence' in cmd.target || 'compensation' in cmd.target ? { step: row } : {}),
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

/**
 * The first part of the state the command was drafted against that is not the state found, as the
 * command field that states it (`expected.stepAttempts`; `target` when the target is not there), or
 * null when the expectation holds.
 */
export function expectationDrift(cmd: RepairCommand, actual: RepairActualState): string | null {
  if (!actual.exists) return 'target';
  if ('outboxId' in cmd.target) {
    const e = cmd.expected as { status: string; attempts: number };
    if (!('outbox' in actual)) return 'target';
    if (actual.status !== e.status) return 'expected.status';
    return actual.attempts === e.attempts ? null : 'expected.attempts';
  }
  if ('instanceId' in cmd.target) {
    const e = cmd.expected as { state: string; version: number };
    if (!('version' in actual)) return 'target';
    if (actual.state !== e.state) return 'expected.state';
    return actual.version === e.version ? null : 'expected.version';
  }
  if (!('runStatus' in actual)) return 'target';
  const e = cmd.expected as { runStatus: string; stepStatus?: string; stepAttempts?: number };
  if (actual.runStatus !== e.runStatus) return 'expected.runStatus';
  if (e.stepStatus === undefined) return null;
  if (!actual.step) return 'target';
  if (actual.step.status !== e.stepStatus) return 'expected.stepStatus';
  return actual.step.attempts === e.stepAttempts ? null : 'expected.stepAttempts';
}

/** Whether the state the command was drafted against is the state found. */
export function expectationHolds(cmd: RepairCommand, actual: RepairActualState): boolean {
  return expectationDrift(cmd, actual) === null;
}

/**
 * The command's handler, its target read (and locked, with `lock`) and the state found: what both
 * preview and apply start from.
 */
export async function readRepairTarget(db: Db, deps: RepairDeps, cmd: RepairCommand, lock: boolean) {
  if ('outboxId' in cmd.target) {
    const handler = outboxRepairHandlers[cmd.kind] as RepairHandler<RepairCommand, unknown, unknown> | undefined;
    if (!handler) throw new EngineError('invalid_input', `kind: "${cmd.kind}" has no handler`, { field: 'kind' });
    const target = await readOutboxTarget(db, cmd as OutboxRepairCommand, lock);
    return { handler, target, actual: outboxActual(target) };
  }
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
