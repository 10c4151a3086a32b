import { EngineError } from '../errors/engine-error.ts';
import { appendFlowEvent } from '../store/append-flow-event.ts';
import { enqueueJob } from '../store/enqueue-job.ts';
import { findOrphanedSteps, type OrphanedStep } from '../store/find-orphaned-steps.ts';
import { releaseOrphanedStep } from '../store/repairs/release-orphaned-step.ts';
import type { StepTable } from '../store/step-table.ts';
import type { Db } from '../store/types.ts';
import type { RepairCommandOf } from './repair-command.ts';
import { noEffects } from './repair-effects.ts';
import type { RepairDeps, RepairHandler, RunTarget } from './repair-handler.ts';

type ReclaimCommand = RepairCommandOf<'run.reclaim_step'>;

/** Why the target cannot be reclaimed, and the command field an operator changes to fix it. */
interface Blocker {
  message: string;
  field: string;
}

/**
 * The row the command names, as the reclaim sees it: an action step of the run (by sequence) or a
 * compensation (by rollback level and ordinal); what it is called in messages; or why none is there.
 */
function namedRow(
  cmd: ReclaimCommand,
  target: RunTarget,
):
  | { table: StepTable; id: string; label: string; status: string; claimedBy: string | null; deadline: Date | null }
  | Blocker {
  const runId = target.run.id;
  if ('compensation' in cmd.target) {
    const { rollbackLevel, ordinal } = cmd.target.compensation;
    const c = target.compensation;
    if (!c)
      return {
        message: `run ${runId} has no compensation ${ordinal} in rollback level ${rollbackLevel}`,
        field: 'target.compensation',
      };
    return {
      table: 'compensation_runs',
      id: c.id,
      label: `compensation ${c.name} (rollback ${rollbackLevel}.${ordinal}, undoing step ${c.action_sequence})`,
      status: c.status,
      claimedBy: c.claimed_by,
      deadline: c.reclaim_stale_at,
    };
  }
  const sequence = cmd.target.stepSequence;
  const step = target.step;
  if (!step) return { message: `run ${runId} has no step ${sequence}`, field: 'target.stepSequence' };
  if (step.kind !== 'action')
    return { message: `step ${sequence} is a ${step.kind} step, not an action`, field: 'target.stepSequence' };
  return {
    table: 'action_runs',
    id: step.id,
    label: `step ${sequence} (${step.name})`,
    status: step.status,
    claimedBy: step.claimed_by,
    deadline: step.reclaim_stale_at,
  };
}

/**
 * The named row as an orphan (Running, no reclaim deadline, its worker gone: findOrphanedSteps, the
 * monitor's and the kick's own test), or why it is not one. Action steps and compensations carry
 * the same claim and fence, so one test serves both.
 */
async function findOrphan(
  db: Db,
  deps: RepairDeps,
  cmd: ReclaimCommand,
  target: RunTarget,
): Promise<{ orphan: OrphanedStep; label: string } | Blocker> {
  const row = namedRow(cmd, target);
  if ('message' in row) return row;
  if (row.status !== 'Running')
    return {
      message: `${row.label} is ${row.status}; only a Running step or compensation is reclaimed`,
      field: 'expected.stepStatus',
    };
  const deadAfter = deps.runtime.config.worker.dead_after_seconds;
  const [orphan] = await findOrphanedSteps(db, {
    deadAfterSeconds: deadAfter,
    runId: target.run.id,
    rowId: row.id,
    limit: 1,
  });
  if (orphan?.table === row.table) return { orphan, label: row.label };
  // A row with a reclaim deadline was already given one (a kick, the monitor, a claim that set it):
  // whether its worker lives or not, the engine takes it back itself once that passes (review 43).
  if (row.deadline)
    return {
      message:
        row.deadline <= deps.runtime.clock.now()
          ? `${row.label} is reclaimable already (since ${row.deadline.toISOString()}: a kick, or its action's reclaim setting): the run's next replay takes it back; nothing to reclaim here`
          : `${row.label} has a reclaim deadline at ${row.deadline.toISOString()} (its action's reclaim setting): the engine takes it back by itself once that passes, if worker ${row.claimedBy ?? '(none)'} has not finished it`,
      field: 'target',
    };
  return {
    message: `${row.label} is held by worker ${row.claimedBy ?? '(none)'}, which is not known to be gone: it counts as gone once stopped or ${deadAfter} s (worker.dead_after_seconds) after its last heartbeat`,
    field: 'target',
  };
}

/**
 * Reclaims a Running action step or compensation whose worker is gone (ADR 0010's repair, as a
 * typed command; compensations by ADR 0031): the row goes back to Pending under the expected status
 * and attempts, so the dead worker's late outcome is `outcome_rejected`, and the run is woken to
 * claim and run it again (a compensation in its rollback level, as the replay reaches it). Refused
 * while the worker is alive: only the heartbeat tells a dead worker from a slow one.
 */
export const reclaimStepRepair: RepairHandler<ReclaimCommand, RunTarget> = {
  async plan(db, deps, cmd, target) {
    const found = await findOrphan(db, deps, cmd, target);
    const effects = noEffects();
    if ('orphan' in found) {
      const { orphan, label } = found;
      const what = orphan.table === 'compensation_runs' ? 'compensation' : 'action';
      effects.transitions.push({ subject: label, from: 'Running', to: 'Pending' });
      effects.notes.push(
        `worker ${orphan.claimed_by} is gone since ${orphan.gone_since.toISOString()}: if it reports attempt ${orphan.attempts} late, that outcome is rejected (outcome_rejected)`,
        `the ${what} runs again as attempt ${orphan.attempts + 1}; its side effect may already have happened once`,
      );
    }
    effects.jobs.push({ kind: 'wake-run', runId: target.run.id, availableAt: deps.runtime.clock.now().toISOString() });
    effects.history.push('step.reclaimed');
    return {
      blockers: 'orphan' in found ? [] : [found.message],
      effects,
      ...('field' in found ? { field: found.field } : {}),
    };
  },
  async perform(tx, deps, cmd, target, _p, { now, id }) {
    const found = await findOrphan(tx, deps, cmd, target);
    if (!('orphan' in found)) throw new EngineError('repair_refused', found.message, { field: found.field });
    const { orphan, label } = found;
    const released = await releaseOrphanedStep(tx, {
      table: orphan.table,
      id: orphan.id,
      attempts: orphan.attempts,
      claimedBy: orphan.claimed_by,
      now,
    });
    if (!released) throw new EngineError('repair_refused', `${label} changed under the lock`);
    await enqueueJob(tx, { kind: 'wake-run', runId: orphan.run_id, availableAt: now });
    await appendFlowEvent(tx, {
      runId: orphan.run_id,
      type: 'step.reclaimed',
      sequence: orphan.sequence,
      rowId: orphan.id,
      data: {
        name: orphan.name,
        table: orphan.table,
        by: 'repair',
        repair: id,
        owner: orphan.claimed_by,
        ownerGoneSince: orphan.gone_since.toISOString(),
        attempts: orphan.attempts,
      },
    });
    return {};
  },
};
