import type { Json } from '../definitions/define-action.ts';
import { appendFlowEvent } from '../store/append-flow-event.ts';
import type { DbFlowRun } from '../store/find-run.ts';
import { finishRun, type FinalRunStatus } from '../store/finish-run.ts';
import { settleParentStep } from '../store/settle-parent-step.ts';
import { ReplayConflict, type ReplaySession } from './replay/replay-session.ts';
import type { RuntimeDeps } from './runtime-deps.ts';

/**
 * Finishes a run once (compare-and-swap), with its history event, and, for a child, settles the
 * parent's waiting step and wakes the parent, all in one transaction. Emits `run.finished` after.
 */
export async function settleRun(
  deps: RuntimeDeps,
  run: DbFlowRun,
  result: {
    status: FinalRunStatus;
    output?: Json;
    error?: Json;
    session?: ReplaySession;
    /** More for the terminal event's data (e.g. what a timed-out run left undone). */
    details?: Record<string, Json>;
  },
): Promise<'settled' | 'already-finished' | 'stale'> {
  const now = deps.clock.now();
  const refused: { parent: string | null } = { parent: null };
  // What the row says the run ended as: an expired run ends Expired whatever this replay concluded.
  let status: FinalRunStatus = result.status;
  const write = async (tx: Parameters<Parameters<RuntimeDeps['prisma']['$transaction']>[0]>[0]) => {
    const finished = await finishRun(tx, {
      id: run.id,
      status: result.status,
      output: result.output,
      error: result.error,
      now,
    });
    if (!finished) return false;
    status = finished.status;
    await appendFlowEvent(tx, {
      runId: run.id,
      type: `run.${status.toLowerCase()}`,
      data: { ...(result.error ? { error: result.error } : {}), ...result.details },
    });
    if (finished.parentRunId !== null && finished.parentSequence !== null) {
      refused.parent = await settleParentStep(tx, {
        parentRunId: finished.parentRunId,
        parentSequence: finished.parentSequence,
        childRunId: run.id,
        result: { ...result, status },
        now,
      });
    }
    return true;
  };
  let landed: boolean;
  try {
    landed = result.session
      ? await result.session.tx(write, { finishesRun: true })
      : await deps.prisma.$transaction(write);
  } catch (err) {
    // This replay's buffered writes lost to another replay: it is stale and must not finish the run.
    if (err instanceof ReplayConflict) return 'stale';
    throw err;
  }
  if (landed && refused.parent) {
    await deps.journal({
      code: 'write_refused',
      message: `child run ${run.id} finished after its parent ${refused.parent} had; the parent's step was left as it was`,
      runId: refused.parent,
      site: 'child.finish',
      details: { child: run.id, status },
    });
  }
  if (landed) {
    await deps.emit('run.finished', {
      runId: run.id,
      flowName: run.flow_name,
      status,
      output: result.output ?? null,
      error: result.error ?? null,
    });
  }
  return landed ? 'settled' : 'already-finished';
}
