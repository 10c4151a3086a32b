import { EngineError } from '../errors/engine-error.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { appendFlowEvent } from '../store/append-flow-event.ts';
import { enqueueWakeOnce } from '../store/enqueue-job.ts';
import { assertUuid } from '../input/assert-uuid.ts';
import { findOrphanedSteps, type OrphanedStep } from '../store/find-orphaned-steps.ts';
import { lockOpenRun } from '../store/lock-open-run.ts';
import { markStepReclaimable } from '../store/mark-step-reclaimable.ts';
import type { Db } from '../store/types.ts';
import { inOperatorTransaction } from './operator-transaction.ts';

export type ReclaimResult = { reclaimed: true; stepId: string } | { reclaimed: false; reason: string };

/**
 * The repair for a step Running with no reclaim deadline whose worker is gone (ADR 0010): the row
 * is opened to the ordinary claim and the run is woken, in one transaction with its history row.
 * The replay that follows claims it with the normal compare-and-swap (attempts + 1), so a late
 * outcome from the old owner is rejected. Refused (nothing written) while the owner is alive.
 *
 * @example
 * const r = await engine.reclaimStep(runId, { stepId: detail.actions[2].id });
 * if (!r.reclaimed) console.log(r.reason);
 */
export async function reclaimStep(
  deps: RuntimeDeps,
  runId: string,
  step: { stepId?: string } = {},
): Promise<ReclaimResult> {
  assertUuid(runId, 'runId');
  if (step.stepId !== undefined) assertUuid(step.stepId, 'stepId');
  return reclaimInTransaction(deps, runId, step);
}

/** {@link reclaimStep}'s transaction: run again whole when PostgreSQL rolled it back (a lock cycle). */
function reclaimInTransaction(deps: RuntimeDeps, runId: string, step: { stepId?: string }): Promise<ReclaimResult> {
  return inOperatorTransaction(
    deps,
    async (tx): Promise<ReclaimResult> => {
      // Locked until commit (lockOpenRun): a reclaim never lands after the run's terminal event. No key update,
      // as the doctor's reclaim and a kick take it: one of them reclaims the step (review 60).
      if (!(await lockOpenRun(tx, runId, 'no key update'))) {
        const run = await tx.flowRun.findUnique({ where: { id: runId }, select: { status: true } });
        if (!run) throw new EngineError('run_not_found', `run ${runId} does not exist`);
        throw new EngineError(
          'run_not_open',
          `run ${runId} is ${run.status}; only an open run's step can be reclaimed`,
        );
      }
      const [orphan] = await findOrphanedSteps(tx, {
        deadAfterSeconds: deps.config.worker.dead_after_seconds,
        runId,
        ...(step.stepId ? { rowId: step.stepId } : {}),
        limit: 1,
      });
      if (!orphan) {
        const what = step.stepId ? `step ${step.stepId} of run ${runId} is not` : `run ${runId} has no step`;
        return {
          reclaimed: false,
          reason: `${what} Running under a worker that is gone, so nothing was reclaimed; a worker that is alive but hung stops counting as alive once it is stopped or ${deps.config.worker.dead_after_seconds} s (worker.dead_after_seconds) after its last heartbeat`,
        };
      }
      return reclaimOrphan(deps, tx, orphan, 'operator');
    },
    `reclaim of ${step.stepId ? `step ${step.stepId} of ` : 'the step of '}run ${runId}`,
  );
}

/**
 * Opens one orphaned row to the claim and wakes its run (the caller's transaction, which holds the run
 * lock). `wake: false` when the caller sends the run's one wake itself (a kick): two wakes of one run
 * start two replays that race for the reopened row, and the loser journals a claim_lost for nothing.
 */
export async function reclaimOrphan(
  deps: RuntimeDeps,
  tx: Db,
  orphan: OrphanedStep,
  by: 'operator' | 'kick' | 'doctor',
  now: Date = deps.clock.now(),
  { wake = true }: { wake?: boolean } = {},
): Promise<ReclaimResult> {
  const opened = await markStepReclaimable(tx, {
    table: orphan.table,
    id: orphan.id,
    attempts: orphan.attempts,
    claimedBy: orphan.claimed_by,
    now,
  });
  if (!opened) return { reclaimed: false, reason: `step ${orphan.id} changed hands meanwhile; nothing was reclaimed` };
  if (wake) await enqueueWakeOnce(tx, { runId: orphan.run_id, now });
  await appendFlowEvent(tx, {
    runId: orphan.run_id,
    type: 'step.reclaimed',
    sequence: orphan.sequence,
    rowId: orphan.id,
    data: {
      name: orphan.name,
      table: orphan.table,
      by,
      owner: orphan.claimed_by,
      ownerGoneSince: orphan.gone_since.toISOString(),
      attempts: orphan.attempts,
    },
  });
  return { reclaimed: true, stepId: orphan.id };
}
