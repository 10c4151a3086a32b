import type { Json } from '../definitions/define-action.ts';
import { appendFlowEvent } from '../store/append-flow-event.ts';
import { enqueueJob } from '../store/enqueue-job.ts';
import type { DbFlowRun } from '../store/find-run.ts';
import { finishRun, type FinalRunStatus } from '../store/finish-run.ts';
import { settleWaitStep } from '../store/settle-wait-step.ts';
import { ReplayConflict, type ReplaySession } from './replay/replay-session.ts';
import type { RuntimeDeps } from './runtime-deps.ts';

/**
 * Finishes a run once (compare-and-swap), with its history event, and, for a child, settles the
 * parent's waiting step and wakes the parent, all in one transaction. Emits `run.finished` after.
 */
export async function settleRun(
  deps: RuntimeDeps,
  run: DbFlowRun,
  result: { status: FinalRunStatus; output?: Json; error?: Json; session?: ReplaySession },
): Promise<boolean> {
  const now = deps.clock.now();
  const write = async (tx: Parameters<Parameters<RuntimeDeps['prisma']['$transaction']>[0]>[0]) => {
    const finished = await finishRun(tx, {
      id: run.id,
      status: result.status,
      output: result.output,
      error: result.error,
      now,
    });
    if (!finished) return false;
    await appendFlowEvent(tx, {
      runId: run.id,
      type: `run.${result.status.toLowerCase()}`,
      data: result.error ? { error: result.error } : {},
    });
    if (finished.parentRunId !== null && finished.parentSequence !== null) {
      const step = await tx.actionRun.findUnique({
        where: { run_id_sequence: { run_id: finished.parentRunId, sequence: finished.parentSequence } },
      });
      if (step) {
        await settleWaitStep(tx, {
          id: step.id,
          now,
          ...(result.status === 'Completed'
            ? { status: 'Completed', output: result.output ?? null }
            : { status: 'Errored', error: { status: result.status, error: result.error ?? null } }),
        });
        await appendFlowEvent(tx, {
          runId: finished.parentRunId,
          type: 'child.finished',
          sequence: finished.parentSequence,
          data: { child: run.id, status: result.status },
        });
      }
      await enqueueJob(tx, { kind: 'wake-run', runId: finished.parentRunId, availableAt: now });
    }
    return true;
  };
  let landed: boolean;
  try {
    landed = result.session ? await result.session.tx(write) : await deps.prisma.$transaction(write);
  } catch (err) {
    if (err instanceof ReplayConflict) return false;
    throw err;
  }
  if (landed) {
    await deps.emit('run.finished', {
      runId: run.id,
      flowName: run.flow_name,
      status: result.status,
      output: result.output ?? null,
      error: result.error ?? null,
    });
  }
  return landed;
}
