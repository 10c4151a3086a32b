import { EngineError } from '../errors/engine-error.ts';
import { appendFlowEvent } from '../store/append-flow-event.ts';
import { enqueueJob } from '../store/enqueue-job.ts';
import { findOrphanedSteps, type OrphanedStep } from '../store/find-orphaned-steps.ts';
import { releaseOrphanedStep } from '../store/repairs/release-orphaned-step.ts';
import type { Db } from '../store/types.ts';
import type { RepairCommandOf } from './repair-command.ts';
import { noEffects } from './repair-effects.ts';
import type { RepairDeps, RepairHandler, RunTarget } from './repair-handler.ts';

/** The named step as an orphan (Running, no reclaim deadline, its worker gone), or why it is not one. */
async function findOrphan(
  db: Db,
  deps: RepairDeps,
  target: RunTarget,
  sequence: number,
): Promise<{ orphan: OrphanedStep } | { blocker: string }> {
  const step = target.step;
  if (!step) return { blocker: `run ${target.run.id} has no step ${sequence}` };
  if (step.kind !== 'action') return { blocker: `step ${sequence} is a ${step.kind} step, not an action` };
  if (step.status !== 'Running')
    return { blocker: `step ${sequence} is ${step.status}; only a Running step is reclaimed` };
  const deadAfter = deps.runtime.config.worker.dead_after_seconds;
  const [orphan] = await findOrphanedSteps(db, {
    deadAfterSeconds: deadAfter,
    runId: target.run.id,
    rowId: step.id,
    limit: 1,
  });
  if (orphan?.table === 'action_runs') return { orphan };
  return {
    blocker: `step ${sequence} is held by worker ${step.claimed_by ?? '(none)'}, which is not known to be gone: it counts as gone once stopped or ${deadAfter} s (worker.dead_after_seconds) after its last heartbeat${step.reclaim_stale_at ? '; this step has a reclaim deadline, and the engine reclaims it itself once that passes' : ''}`,
  };
}

/**
 * Reclaims a Running action step whose worker is gone (ADR 0010's repair, as a typed command): the
 * row goes back to Pending under the expected status and attempts, so the dead worker's late
 * outcome is `outcome_rejected`, and the run is woken to claim and run the step again. Refused while
 * the worker is alive: only the heartbeat tells a dead worker from a slow one.
 */
export const reclaimStepRepair: RepairHandler<RepairCommandOf<'run.reclaim_step'>, RunTarget> = {
  async plan(db, deps, cmd, target) {
    const found = await findOrphan(db, deps, target, cmd.target.stepSequence);
    const effects = noEffects();
    if ('orphan' in found) {
      const { orphan } = found;
      effects.transitions.push({ subject: `step ${orphan.sequence} (${orphan.name})`, from: 'Running', to: 'Pending' });
      effects.notes.push(
        `worker ${orphan.claimed_by} is gone since ${orphan.gone_since.toISOString()}: if it reports attempt ${orphan.attempts} late, that outcome is rejected (outcome_rejected)`,
        'the action runs again as the next attempt; its side effect may already have happened once',
      );
    }
    effects.jobs.push({ kind: 'wake-run', runId: target.run.id, availableAt: deps.runtime.clock.now().toISOString() });
    effects.history.push('step.reclaimed');
    return { blockers: 'blocker' in found ? [found.blocker] : [], effects };
  },
  async perform(tx, deps, cmd, target, _p, { now, id }) {
    const found = await findOrphan(tx, deps, target, cmd.target.stepSequence);
    if ('blocker' in found) throw new EngineError('repair_refused', found.blocker);
    const { orphan } = found;
    const released = await releaseOrphanedStep(tx, {
      id: orphan.id,
      attempts: orphan.attempts,
      claimedBy: orphan.claimed_by,
      now,
    });
    if (!released) throw new EngineError('repair_refused', `step ${orphan.sequence} changed under the lock`);
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
