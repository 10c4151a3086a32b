import type { JobAck } from '../store/delete-job.ts';
import { enqueueJob } from '../store/enqueue-job.ts';
import { listActionRuns } from '../store/list-action-runs.ts';
import { listCompensationRuns } from '../store/list-compensation-runs.ts';
import type { HandedOverRun } from '../store/insert-started-run.ts';
import { loadRunForReplay, type LoadedRun } from '../store/load-run-for-replay.ts';
import type { DbActionRun } from '../store/list-action-runs.ts';
import type { DbCompensationRun } from '../store/list-compensation-runs.ts';
import { parkRun } from '../store/park-run.ts';
import { handBackWake } from '../store/hand-back-wake.ts';
import { autocommitDb } from '../db/autocommit-db.ts';
import type { FlowDefinition } from '../definitions/flow-context.ts';
import { lockOpenRun } from '../store/lock-open-run.ts';
import { terminalRunStatuses } from '../store/types.ts';
import { isFlowError, serializeError } from './flow-error.ts';
import { leftUndoneJson, planLeftUndone, readLeftUndone, type LeftUndonePlan } from './find-left-undone.ts';
import { inRunTransaction } from './in-run-transaction.ts';
import { runFlowCode, type FlowSettled } from './replay/probe-first-step.ts';
import { ReplayConflict, ReplaySession, type Park } from './replay/replay-session.ts';
import type { RuntimeDeps } from './runtime-deps.ts';
import { settleLostClaim } from './steps/settle-lost-claim.ts';
import {
  afterRunSettled,
  childrenCancelledAtEnd,
  settleRun,
  settleRunInTransaction,
  type SettleResult,
} from './settle-run.ts';

export type ExecuteOutcome = 'finished' | 'parked' | 'not-open';

/**
 * Replays a run: recorded steps return their recorded result (or rethrow their recorded failure);
 * the first unrecorded step is scheduled, claimed and run right here (the fast path: a sequential
 * flow pays no queue round trip per step). When the code cannot go on now, the replay parks: the
 * flow's promise is abandoned, never rejected, so engine control flow never reaches user code.
 * An engine-internal failure (database down) is rethrown so the job is redelivered. A run this
 * replay finishes acknowledges `ack` (its job) in the finishing transaction.
 */
export async function executeRun(
  deps: RuntimeDeps,
  runId: string,
  ack?: JobAck,
  claimed?: LoadedRun,
): Promise<ExecuteOutcome> {
  const now = deps.clock.now();
  // A run this process's start wrote already active and handed over (ADR 0041), or one the job's
  // claim marked active (`claimed`, ADR 0100): no load. Taken before the first await, once: a retry
  // of this replay loads the run like any other.
  const handedOver = ack ? deps.startedActive.get(ack.id) : undefined;
  if (ack && handedOver) deps.startedActive.delete(ack.id);
  const startedActive = handedOver ?? (claimed ? { ...claimed, firstStep: null, held: null } : undefined);
  // Otherwise one transaction loads the run and marks it active in one statement, then reads its record.
  const loaded = startedActive
    ? fromStart(startedActive)
    : await inRunTransaction(deps, async (tx) => {
        const found = await loadRunForReplay(tx, {
          runId,
          now,
          flows: deps.registry.flowNames,
          versions: deps.registry.flowVersions,
        });
        if (!found || (terminalRunStatuses as readonly string[]).includes(found.run.status)) return null;
        const { run, activeVersion } = found;
        if (activeVersion === null) {
          const overdue =
            (run.run_timeout_at !== null && run.run_timeout_at.getTime() <= now.getTime()) ||
            (run.cancel_deadline_at !== null && run.cancel_deadline_at.getTime() <= now.getTime());
          // Open, on time and of a flow and version this worker runs, yet not marked: the statement and
          // this code disagree.
          const flow = deps.registry.flows.get(run.flow_name);
          if (!overdue && flow && run.flow_version <= flow.version)
            throw new Error(`run ${runId} is open, on time and of a known flow, but was not marked active`);
          return { run, replay: null };
        }
        const active = { wasPending: run.status === 'Pending', open: true, version: activeVersion };
        // A run's steps are only ever written by a replay, which marks it active first: a run that was
        // still Pending has none to read.
        if (active.wasPending) return { run, replay: { active, steps: [], compensations: [] } };
        const steps = await listActionRuns(tx, runId);
        const compensations = await listCompensationRuns(tx, runId);
        return { run, replay: { active, steps, compensations } };
      });
  if (!loaded) return 'not-open';
  const { run } = loaded;

  if (run.run_timeout_at && run.run_timeout_at.getTime() <= now.getTime()) {
    // The backstop closes the run without compensation (ADR 0011); what that leaves undone is stated:
    // the compensations named by a replay made first, kept where the rows read under the run's lock,
    // in the transaction that closes it, still say them (ADR 0091).
    const timeoutAt = run.run_timeout_at;
    await closeStatingWhatIsLeft(deps, run, await planLeftUndone(deps, run), {
      status: 'TimedOut',
      name: 'RunTimedOut',
      message: `the engine's run timeout passed at ${timeoutAt.toISOString()}`,
    });
    return 'finished';
  }
  if (run.cancel_deadline_at && run.cancel_deadline_at.getTime() <= now.getTime()) {
    // Closed at its window like a terminate closes a run: it states what it left undone and in flight,
    // from the rows under the run's lock in the closing transaction (ADR 0091, 0124). No replay: the
    // code may be what ignores the cancellation.
    const expired = run.expired_at !== null;
    await closeStatingWhatIsLeft(deps, run, undefined, {
      status: expired ? 'Expired' : 'Cancelled',
      name: 'CleanupWindowClosed',
      message: `${expired ? 'expired' : 'cancelled'}; the cleanup window closed at ${run.cancel_deadline_at.toISOString()}`,
    });
    return 'finished';
  }
  const flow = deps.registry.flows.get(run.flow_name);
  // A run of a flow this worker does not have, or of a newer version of it (the load left it unmarked):
  // its wake goes back to the queue for a worker whose code can run it, nothing is replayed (ADR 0112).
  // An older version is replayed: its record, not its version, is the contract (ADR 0003).
  if (!flow || !loaded.replay || run.flow_version > flow.version) {
    await handBack(deps, run, flow, ack, now);
    return 'parked';
  }
  const { active, steps, compensations } = loaded.replay;
  // The start's probe held at the first step the start wrote goes on from there (ADR 0097); otherwise
  // the flow's code runs from its first line, the start's claim waiting for its step.
  const firstStep = startedActive?.firstStep;
  const resumed = firstStep ? (startedActive?.held?.resume(deps, firstStep) ?? null) : null;
  const session =
    resumed?.session ?? new ReplaySession(deps, run, new Map(steps.map((r) => [r.sequence, r])), compensations);
  session.runVersion = active.version;
  session.historyEpoch = run.history_epoch;
  if (firstStep && !resumed) session.claimedByStart(firstStep);

  type Settled = FlowSettled | { kind: 'parked'; park: Park };
  const settled: Settled = await Promise.race([
    resumed?.settled ?? runFlowCode(flow, session),
    session.parked.then((park): Settled => ({ kind: 'parked', park })),
  ]);

  // The code asked for one step more than the run may record (ADR 0125): the run ends Failed naming the
  // setting, its code not run further (no compensation: a runaway loop's catch is no place to run one).
  const limitReached = session.stepLimitReached;
  const overLimit: SettleResult | null =
    limitReached === null
      ? null
      : {
          status: 'Failed',
          error: {
            name: 'StepLimitReached',
            message: `the run reached its limit of ${deps.config.limits.max_steps_per_run} steps (limits.max_steps_per_run): step ${limitReached} was not started; a flow this long should go on as a new run, or the limit be raised`,
          },
          session,
          ...(ack ? { ack } : {}),
        };
  if (overLimit) return finishWith(deps, run, session, overLimit);
  if (settled.kind === 'parked') return park(deps, session, settled.park);
  if (session.park) return park(deps, session, session.park);
  const last = session.lastRecordedSequence();
  if (last > session.sequence) {
    const row = session.recorded.get(last);
    return park(deps, session, {
      waitingFor: null,
      stuckReason: `replay_blocked: the code finished after step ${session.sequence}, but step ${last} (${row?.kind ?? '?'} "${row?.name ?? '?'}") is recorded; deploy code that matches the record, then kick the run`,
    });
  }
  // A rollback that stopped closes the run with what it left undone stated (ADR 0124), unless the code completed anyway.
  const stopped = settled.kind !== 'ok' && session.rollbackStopped;
  const base = { session, ...(ack ? { ack } : {}), ...(stopped ? { rollbackStopped: true } : {}) };
  const end: SettleResult =
    settled.kind === 'ok'
      ? { status: 'Completed', output: settled.output, ...base }
      : run.expired_at !== null
        ? { status: 'Expired', error: serializeError(settled.error), ...base }
        : isFlowError(settled.error, 'cancelled')
          ? { status: 'Cancelled', error: serializeError(settled.error), ...base }
          : { status: session.compensated ? 'Compensated' : 'Failed', error: serializeError(settled.error), ...base };
  return finishWith(deps, run, session, end);
}

/** Writes the run's end, `end`, from `session`'s replay: 'finished', or parked when a newer replay wrote the run first. */
async function finishWith(
  deps: RuntimeDeps,
  run: LoadedRun['run'],
  session: ReplaySession,
  end: SettleResult,
): Promise<ExecuteOutcome> {
  let result: Awaited<ReturnType<typeof settleRun>>;
  try {
    result = await settleRun(deps, run, end);
  } catch (err) {
    // The finish failed (a database error, a lock cycle's rollback): what it carried was put back, and
    // is written now, with a wake, before the job's failure is reported (review 24).
    await session.flush();
    throw err;
  }
  if (result === 'stale') return park(deps, session, { waitingFor: null, stuckReason: null });
  // A step the code did not await may still finish: its outcome meets its fence (refused now that the
  // run ended, and journaled) instead of a buffer nobody writes (review 24).
  const late = session.flush();
  if (late) await late;
  return 'finished';
}

/**
 * Closes an open run without replaying it (the engine's run timeout, the end of a cleanup window), with
 * what it left undone and in flight read from the rows under the run's lock in the closing transaction
 * (ADR 0091, 0124); `plan`, the compensations a replay named first, when there is one. A run no
 * longer open is left as it is.
 */
async function closeStatingWhatIsLeft(
  deps: RuntimeDeps,
  run: LoadedRun['run'],
  plan: LeftUndonePlan | undefined,
  end: { status: 'TimedOut' | 'Cancelled' | 'Expired'; name: string; message: string },
): Promise<void> {
  const settled = await inRunTransaction(deps, async (tx) => {
    if (!(await lockOpenRun(tx, run.id, 'update'))) return null;
    const leftUndone = leftUndoneJson(await readLeftUndone(tx, run.id, plan));
    return settleRunInTransaction(
      tx,
      run,
      {
        status: end.status,
        error: { name: end.name, message: end.message, left_undone: leftUndone },
        details: { left_undone: leftUndone },
      },
      deps.clock.now(),
      undefined,
      childrenCancelledAtEnd(deps, deps.clock.now()),
    );
  });
  if (settled) await afterRunSettled(deps, settled);
}

/**
 * Hands the run's wake back (ADR 0112): the job stays, due again after a delay that grows with its
 * deliveries (the poll interval doubled up to a minute), and the run says why, unless a worker whose
 * code can run it is replaying it now. One statement; the job is this worker's no longer, so nothing
 * acknowledges it.
 */
async function handBack(
  deps: RuntimeDeps,
  run: LoadedRun['run'],
  flow: FlowDefinition | undefined,
  ack: JobAck | undefined,
  now: Date,
): Promise<void> {
  const reason = flow
    ? `no_worker_for_version: ${run.flow_name} v${run.flow_version} (worker ${deps.workerId} has v${flow.version}); its wake waits for a worker with that version`
    : `unknown_flow: no flow named "${run.flow_name}" is registered on this worker (${deps.workerId}); its wake waits for a worker that has it`;
  const pollMs = deps.config.worker.poll_interval_ms;
  await handBackWake(autocommitDb(deps), {
    runId: run.id,
    jobId: ack?.id ?? null,
    workerId: ack?.workerId ?? deps.workerId,
    seenVersion: run.version,
    reason,
    baseMs: pollMs,
    maxMs: Math.max(pollMs, handBackMaxDelayMs),
    now,
  });
  if (ack) ack.done = true;
}

/** The longest a handed-back wake waits before it is offered again (ADR 0112). */
const handBackMaxDelayMs = 60_000;

/**
 * A replay that stopped as stale because an outcome of its own was rejected (another worker took the
 * step over while it ran: its claim was lost) parks saying why, as a replay meeting that row before its
 * claim does: the row is read and described by the same code (settleLostClaim: the worker holding it,
 * since when, whether reclaim can take it over; owner_gone when that worker is gone). Review 52, ADR 0129.
 * A park that already says why, or a rejected step another worker has since finished, is left as it is
 * (that worker's replay carries the run on).
 */
async function withLostClaimReason(session: ReplaySession, p: Park): Promise<Park> {
  if (p.waitingFor !== null || p.stuckReason !== null) return p;
  for (const o of session.rejectedOutcomes) {
    const now = await settleLostClaim(
      session,
      { table: o.table, rowId: o.rowId, sequence: o.sequence, name: o.name, waitingFor: null },
      // The rejection is journaled already (outcome_rejected).
      { journal: false },
    );
    if (now.kind === 'pending' && (now.waitingFor !== null || now.stuckReason !== undefined))
      return { waitingFor: now.waitingFor, stuckReason: now.stuckReason ?? null };
  }
  return p;
}

/**
 * What the load would have returned for a run its start wrote active: no record yet (ADR 0041), or
 * only the first step the start claimed for this replay (ADR 0048).
 */
function fromStart({ run, activeVersion, firstStep }: HandedOverRun) {
  return {
    run,
    replay: {
      active: { wasPending: true, open: true, version: activeVersion ?? 0 },
      steps: firstStep ? [firstStep] : ([] as DbActionRun[]),
      compensations: [] as DbCompensationRun[],
    },
  };
}

async function park(deps: RuntimeDeps, session: ReplaySession, given: Park): Promise<ExecuteOutcome> {
  if (given.abort !== undefined) {
    await session.flush();
    throw given.abort instanceof Error ? given.abort : new Error(JSON.stringify(given.abort));
  }
  const p = await withLostClaimReason(session, given);
  const args = {
    runId: session.runId,
    waitingFor: p.waitingFor,
    stuckReason: p.stuckReason,
    // A stuck reason always lands: a run that cannot move must say so. A healthy wait only lands if
    // no newer replay wrote the run since (its state is the fresher one).
    expectedVersion: p.stuckReason ? null : session.runVersion,
    now: deps.clock.now(),
  };
  // The park carries whatever this replay still has buffered (a completed step's outcome). When it
  // does not land, a newer replay wrote the run meanwhile, and may have parked on a step this replay
  // recorded as running here (a cancellation's or a repair's wake, say): an outcome this replay
  // recorded, now or earlier (a parallel branch's, written alone), gets a wake of its own, or nothing
  // would replay the run again (ADR 0010's outcome stands; the run must move on from it). Review 19.
  const carries = session.pendingOutcomes.length > 0;
  let landed = false;
  let woken = false;
  try {
    await session
      .tx(async (tx) => {
        landed = await parkRun(tx, args);
        if (!landed && (carries || session.recordedOutcome)) {
          await enqueueJob(tx, { kind: 'wake-run', runId: session.runId, availableAt: args.now });
          woken = true;
        }
      })
      .catch((err: unknown) => {
        if (!(err instanceof ReplayConflict)) throw err;
      });
  } finally {
    // What the park did not carry (an outcome it put back when its transaction stopped, or one of a
    // step that finished while it ran) is written now, with a wake; one that finishes later is written
    // when it does (ReplaySession.buffer). Review 23: it was left in the buffer of a replay that had
    // parked, its step Running for good and the run waiting on it.
    await session.flush();
  }
  // The park's transaction stopped as stale (the run's history epoch moved on, an outcome it carried
  // was refused, the run ended): the wake goes in alone, under the run's lock, while the run is open.
  if (!landed && !woken && session.recordedOutcome)
    await inRunTransaction(deps, async (tx) => {
      if (await lockOpenRun(tx, session.runId))
        await enqueueJob(tx, { kind: 'wake-run', runId: session.runId, availableAt: deps.clock.now() });
    });
  return 'parked';
}
