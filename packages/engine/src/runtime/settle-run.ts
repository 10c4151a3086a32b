import type { Json } from '../definitions/define-action.ts';
import type { RawDb } from '../db/raw-db.ts';
import { appendRunEnd } from '../store/append-run-end.ts';
import type { DbFlowRun } from '../store/find-run.ts';
import { deleteJob, type JobAck } from '../store/delete-job.ts';
import { finishRun, type FinalRunStatus } from '../store/finish-run.ts';
import { settleParentStep } from '../store/settle-parent-step.ts';
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
  result: Omit<SettleResult, 'session' | 'ack'>,
  now: Date,
  ack?: JobAck,
): Promise<SettledRun | null> {
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
  await appendRunEnd(tx, {
    runId: run.id,
    type: `run.${status.toLowerCase()}`,
    data: runEndData(result),
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
  const write = (tx: RawDb) => settleRunInTransaction(tx, run, settle, now, ack);
  let settled: SettledRun | null = null;
  try {
    // A top-level run's common finish is one statement (ADR 0042); when it writes nothing, the
    // transaction does what it always did (a stale replay, a run finished meanwhile, a lost outcome).
    if (session && run.parent_run_id === null && canFuse(session))
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
