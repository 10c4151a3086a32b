import type { Json } from '../definitions/define-action.ts';
import type { RawDb } from '../db/raw-db.ts';
import { appendRunEnd } from '../store/append-run-end.ts';
import type { DbFlowRun } from '../store/find-run.ts';
import { deleteJob, type JobAck } from '../store/delete-job.ts';
import { finishRun, type FinalRunStatus } from '../store/finish-run.ts';
import { settleParentStep } from '../store/settle-parent-step.ts';
import { requestDescendantsCancel } from '../store/request-descendants-cancel.ts';
import { lockOpenRun } from '../store/lock-open-run.ts';
import { markCompensationsNotRun } from '../store/mark-compensations-not-run.ts';
import { leftUndoneJson, readLeftUndoneOfRollback, type LeftUndone } from './find-left-undone.ts';
import { inRunTransaction } from './in-run-transaction.ts';
import { finishInBatch } from './run-statement-batches.ts';
import { canFuse } from './replay/fused-outcome.ts';
import { ReplayConflict, type ReplaySession } from './replay/replay-session.ts';
import type { RuntimeDeps } from './runtime-deps.ts';

export interface SettleResult {
  status: FinalRunStatus;
  output?: Json;
  error?: Json;
  session?: ReplaySession;
  /** The job this replay runs under: deleted by the finishing transaction, so no later one is needed. */
  ack?: JobAck;
  /** More for the terminal event's data (e.g. what a timed-out run left undone). */
  details?: Record<string, Json>;
  /**
   * The run's rollback stopped (a compensation failed or did not finish, ADR 0124): the finish states
   * what it left undone, read under the run's lock, and closes the compensations that never ran.
   */
  rollbackStopped?: boolean;
}

/** A run this transaction finished: what the row says it ended as, and a parent that had finished first. */
export interface SettledRun {
  run: DbFlowRun;
  status: FinalRunStatus;
  output: Json | undefined;
  error: Json | undefined;
  refusedParent: string | null;
}

/**
 * Finishes a run once (compare-and-swap, the row FOR UPDATE) inside the caller's transaction, with its
 * history event and, for a child, the parent's waiting step settled and the parent woken. Returns
 * null when the run had already finished. With `ack`, the job is acknowledged by the statement that
 * writes the terminal event. Call {@link afterRunSettled} once the transaction committed.
 */
export async function settleRunInTransaction(
  tx: RawDb,
  run: DbFlowRun,
  given: Omit<SettleResult, 'session' | 'ack'>,
  now: Date,
  ack?: JobAck,
  children: OpenChildren = 'leave',
): Promise<SettledRun | null> {
  let result = given;
  // A rollback that stopped: what it left undone, from the rows under the lock the finish takes anyway
  // (FOR UPDATE first, as a finishing transaction does). Only on this path: a run's ordinary finish reads nothing more.
  let rollback: LeftUndone | null = null;
  if (result.rollbackStopped && (await lockOpenRun(tx, run.id, 'update'))) {
    rollback = await readLeftUndoneOfRollback(tx, run.id);
    const leftUndone = leftUndoneJson(rollback);
    const error =
      typeof result.error === 'object' && result.error !== null ? result.error : { value: result.error ?? null };
    result = {
      ...result,
      error: { ...(error as Record<string, Json>), left_undone: leftUndone },
      details: { ...result.details, left_undone: leftUndone },
    };
  }
  const finished = await finishRun(tx, {
    id: run.id,
    status: result.status,
    output: result.output,
    error: result.error,
    now,
  });
  if (!finished) {
    // A replay repeated after a lost acknowledgement finds the run finished: its job goes all the same.
    if (ack) await deleteJob(tx, ack);
    return null;
  }
  // What the row says the run ended as: an expired run ends Expired whatever this replay concluded.
  const status = finished.status;
  if (rollback) {
    const f = rollback.compensation_failed;
    await markCompensationsNotRun(tx, {
      runId: run.id,
      because: f
        ? `the rollback stopped when compensation ${f.name} of step ${f.sequence} failed; the run ended ${status}`
        : `the rollback stopped before it; the run ended ${status}`,
      now,
    });
  }
  const cancelled =
    children === 'leave' ? null : await cancelOpenChildren(tx, run.id, status, children.cleanupUntil, now);
  await appendRunEnd(tx, {
    runId: run.id,
    type: `run.${status.toLowerCase()}`,
    data: { ...runEndData(result), ...cancelledChildrenData(cancelled) },
    ...(ack ? { ack } : {}),
  });
  let refusedParent: string | null = null;
  if (finished.parentRunId !== null && finished.parentSequence !== null) {
    refusedParent = await settleParentStep(tx, {
      parentRunId: finished.parentRunId,
      parentSequence: finished.parentSequence,
      childRunId: run.id,
      result: { ...result, status },
      now,
    });
  }
  return { run, status, output: result.output, error: result.error, refusedParent };
}

/**
 * What a run's end does to its open 'propagate' children (ADR 0093): `leave` them (a terminate, which
 * ends them itself), or request their cancellation with this cleanup deadline.
 */
export type OpenChildren = 'leave' | { cleanupUntil: Date };

/** The cleanup deadline a run's end gives the children it cancels: the engine's default cleanup window. */
export const childrenCancelledAtEnd = (deps: RuntimeDeps, now: Date): OpenChildren => ({
  cleanupUntil: new Date(now.getTime() + deps.config.runs.cancel_cleanup_seconds * 1000),
});

/**
 * A run ended (its row locked FOR UPDATE by the finish in this transaction) while 'propagate' children
 * were still open: the flow's code returned or threw without waiting for them (a `Promise.all` that one
 * child failed). A 'propagate' child does not outlive its parent unasked: its cancellation is requested
 * here, with its parent's end, and it compensates and ends Cancelled on its own (ADR 0093, review 23).
 * A child starting meanwhile waits on the parent's lock and then finds the parent closed.
 */
async function cancelOpenChildren(
  tx: RawDb,
  runId: string,
  status: FinalRunStatus,
  cleanupUntil: Date,
  now: Date,
): Promise<{ children: string[]; childCount: number }> {
  // However many: one statement (ADR 0136); a child at a time outlasted the run's 5 s transaction at
  // about 1,500 children.
  return requestDescendantsCancel(tx, {
    rootId: runId,
    reason: `ended ${status}`,
    childReason: `parent ${runId} ended ${status} before this run finished`,
    deadline: cleanupUntil,
    now,
  });
}

/**
 * What a run's end event says of the children it asked to cancel: their ids (`children_cancelled`), the
 * first `childrenListed` (1,000) in id order, and past that their number (`children_cancelled_count`), so a
 * fan-out of a hundred thousand does not write its whole list into one event.
 */
function cancelledChildrenData(cancelled: { children: string[]; childCount: number } | null): Record<string, Json> {
  if (!cancelled || cancelled.childCount === 0) return {};
  return {
    children_cancelled: cancelled.children,
    ...(cancelled.childCount > cancelled.children.length ? { children_cancelled_count: cancelled.childCount } : {}),
  };
}

/** After the finishing transaction committed: journal a refused parent, emit `run.finished`. */
export async function afterRunSettled(deps: RuntimeDeps, settled: SettledRun): Promise<void> {
  const { run, status } = settled;
  if (settled.refusedParent) {
    await deps.journal({
      code: 'write_refused',
      message: `child run ${run.id} finished after its parent ${settled.refusedParent} had; the parent's step was left as it was`,
      runId: settled.refusedParent,
      site: 'child.finish',
      details: { child: run.id, status },
    });
  }
  await deps.emit('run.finished', {
    runId: run.id,
    flowName: run.flow_name,
    status,
    output: settled.output ?? null,
    error: settled.error ?? null,
  });
}

/**
 * Finishes a run once (compare-and-swap), with its history event, and, for a child, settles the
 * parent's waiting step and wakes the parent, all in one transaction. Emits `run.finished` after.
 */
export async function settleRun(
  deps: RuntimeDeps,
  run: DbFlowRun,
  result: SettleResult,
): Promise<'settled' | 'already-finished' | 'stale'> {
  const now = deps.clock.now();
  const { ack, session, ...settle } = result;
  const write = (tx: RawDb) => settleRunInTransaction(tx, run, settle, now, ack, childrenCancelledAtEnd(deps, now));
  let settled: SettledRun | null = null;
  try {
    // A top-level run's common finish is one statement (ADR 0042); when it writes nothing, the
    // transaction does what it always did (a stale replay, a run finished meanwhile, a lost outcome).
    // A run that may have a child open ends in the transaction, which cancels that child (ADR 0093).
    if (
      session &&
      run.parent_run_id === null &&
      !settle.rollbackStopped &&
      canFuse(session) &&
      !mayHaveOpenChild(session)
    )
      settled = await settleTopRunInOneStatement(session, run, settle, now, ack);
    settled ??= session ? await session.tx(write, { finishesRun: true }) : await inRunTransaction(deps, write);
  } catch (err) {
    // This replay's buffered writes lost to another replay: it is stale and must not finish the run.
    if (err instanceof ReplayConflict) return 'stale';
    throw err;
  }
  if (ack) ack.done = true;
  if (!settled) return 'already-finished';
  await afterRunSettled(deps, settled);
  return 'settled';
}

/**
 * Whether the run may have an open child: its code asked for one in this replay, or one it recorded had
 * not finished when the replay read it. The one-statement finish cannot see a child whose start commits
 * while it waits for the run's lock (its snapshot is older); the transaction lists them after the lock.
 */
const mayHaveOpenChild = (session: ReplaySession): boolean => {
  if (session.askedForChild) return true;
  for (const row of session.recorded.values()) if (row.kind === 'child' && row.status === 'Waiting') return true;
  return false;
};

/** The terminal event's data: the error a run failed with, and whatever else the settlement states. */
const runEndData = (result: Omit<SettleResult, 'session' | 'ack'>): Record<string, Json> => ({
  ...(result.error ? { error: result.error } : {}),
  ...result.details,
});

/**
 * A top-level run's finish as ONE statement carrying the last buffered outcome (finishInBatch): null
 * when it wrote nothing, and the caller's transaction then finishes the run, or finds why not.
 */
async function settleTopRunInOneStatement(
  session: ReplaySession,
  run: DbFlowRun,
  result: Omit<SettleResult, 'session' | 'ack'>,
  now: Date,
  ack?: JobAck,
): Promise<SettledRun | null> {
  const status = await session.oneStatement((deps, outcome) =>
    finishInBatch(deps, {
      runId: run.id,
      status: result.status,
      ...(result.output === undefined ? {} : { output: result.output }),
      ...(result.error === undefined ? {} : { error: result.error }),
      data: runEndData(result),
      now,
      ...(outcome ? { outcome } : {}),
      ...(ack ? { ack } : {}),
      epoch: session.historyEpoch,
    }),
  );
  return status && { run, status, output: result.output, error: result.error, refusedParent: null };
}
