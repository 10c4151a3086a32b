import { randomUUID } from 'node:crypto';
import type { ActionDefinition, Json, RetryPolicy } from '../../definitions/define-action.ts';
import { assertStorableJson } from '../../input/assert-storable-json.ts';
import { jsonRules } from '../../input/input-limits.ts';
import { acquireLock } from '../../store/acquire-lock.ts';
import { claimStep } from '../../store/claim-step.ts';
import { cleanupWindowClosed } from '../../store/cleanup-window-closed.ts';
import { enqueueJob } from '../../store/enqueue-job.ts';
import { insertStep, type NewStep } from '../../store/insert-step.ts';
import type { DbActionRun } from '../../store/list-action-runs.ts';
import { hasCancellation } from '../../store/has-cancellation.ts';
import { readStepClaim } from '../../store/read-step-claim.ts';
import type { StepOutcome } from '../../store/record-step-outcome.ts';
import type { StepTable } from '../../store/step-table.ts';
import { decideRetry } from '../decide-retry.ts';
import { serializeError } from '../flow-error.ts';
import { prismaTransactionOf } from '../in-run-transaction.ts';
import { canFuse } from '../replay/fused-outcome.ts';
import { ReplayConflict, type ReplaySession } from '../replay/replay-session.ts';
import { claimInOneStatement } from './claim-in-one-statement.ts';
import type { ClaimedStep } from '../runtime-deps.ts';
import { reportLostOutcome, writePendingOutcome, type OutcomeWrite, type PendingOutcome } from './pending-outcome.ts';

/** How a claimable step (an action or a compensation) ended for this replay. */
export type ClaimableResult =
  | { kind: 'completed'; output: Json }
  | { kind: 'errored'; error: Json }
  /** The step was new to this replay but another one had recorded it first: judge that record. */
  | { kind: 'raced'; row: DbActionRun }
  /** Not finished here: retry scheduled, claim lost, lock held, outcome rejected, claim not committed. */
  | { kind: 'not-here'; waitingFor: string | null; stuckReason?: string; lost: boolean; rejected?: boolean };

export interface ClaimableStep {
  table: StepTable;
  /** The row to claim, or the row to schedule and claim in one transaction. */
  row: { id: string } | { insert: NewStep };
  sequence: number;
  name: string;
  input: Json;
  action: ActionDefinition<Json, Json>;
  retry: RetryPolicy;
  /** For compensations: the rollback level (events carry it). */
  level?: number;
  /**
   * A branch of a parallel block or level: its completed outcome is written at once, on its own,
   * instead of riding on the replay's next transaction (its siblings are still running).
   */
  writeAlone?: boolean;
}

/**
 * Claims, executes and records one step, fenced by its claim: ONE conditional update to claim (in
 * the transaction that also writes the previous step's outcome and, for a new step, its row), a
 * read-back after that transaction closed when a hook ran inside it, the action, and an outcome conditional on the claim's
 * attempts and the row still Running. A completed outcome rides on the replay's next transaction.
 * A worker that loses anywhere records nothing and says so in the anomaly journal.
 */
export async function runClaimableStep(session: ReplaySession, step: ClaimableStep): Promise<ClaimableResult> {
  const { deps } = session;
  const { table, sequence, name } = step;
  const runId = session.runId;
  const locks = deps.config.locks;
  const isComp = table === 'compensation_runs';
  // The lock belongs to this execution, not to the process: two replays in one process exclude each other too.
  const lockOwner = locks.enabled ? `${deps.workerId}:${randomUUID()}` : '';
  const knownId = 'id' in step.row ? step.row.id : null;
  // The start's own statement claimed this step for this replay (ADR 0048): there is no claim to make.
  const claimedByStart = knownId === null ? null : session.takeStartClaim(knownId);
  // Fault hooks are the tests'; absent, they cost no await (ADR 0049).
  if (claimedByStart === null && deps.faults.beforeClaim)
    await deps.faults.beforeClaim({ table, runId, rowId: knownId ?? '', sequence, name, attempt: 0 });
  const now = deps.clock.now();

  // A rollback goes on whatever happened since; a forward step must not start behind a
  // cancellation or expiry this replay has not seen (its view is stale: it stops quietly).
  const cancellationKnown = isComp || session.cancelRequested;
  const event = {
    type: isComp ? 'compensation.step_started' : 'action.started',
    sequence,
    data: { name, ...(isComp ? { level: step.level ?? 0 } : {}) },
  };
  // The common case, a new step on the driver's path, is one statement (ADR 0042); when it writes
  // nothing, the transaction below does what it always did.
  const fused =
    'insert' in step.row && !isComp && !step.writeAlone && canFuse(session)
      ? await claimInOneStatement(session, step.row.insert, { cancellationKnown, event, now })
      : null;
  if (fused?.kind === 'raced') return { kind: 'raced', row: fused.row };

  let claim: { rowId: string; attempts: number | null; locked: boolean };
  if (claimedByStart !== null) claim = { rowId: knownId ?? '', attempts: claimedByStart, locked: false };
  else if (fused) claim = { rowId: fused.row.id, attempts: fused.row.attempts, locked: false };
  else
    try {
      claim = await session.tx(async (tx) => {
        let rowId = knownId ?? '';
        if ('insert' in step.row) {
          const row = await insertStep(tx, step.row.insert);
          if (!row.inserted) throw new InsertRaced(row);
          session.recorded.set(sequence, row);
          rowId = row.id;
        }
        const lockKey = `step:${table}:${rowId}`;
        if (
          locks.enabled &&
          !(await acquireLock(tx, { key: lockKey, owner: lockOwner, ttlSeconds: locks.action_ttl_seconds, now }))
        ) {
          return { rowId, attempts: null, locked: true };
        }
        const attempts = await claimStep(tx, {
          table,
          id: rowId,
          workerId: deps.workerId,
          now,
          cancellationKnown,
          event,
        });
        if (attempts === null && !isComp && !session.cancelRequested && (await hasCancellation(tx, runId)))
          throw new ReplayConflict();
        // A lost claim must not leave the lock it took behind: roll the whole transaction back.
        if (attempts === null && locks.enabled) throw new ClaimLost(rowId);
        if (attempts !== null) {
          await deps.hooks.stepClaimed?.(prismaTransactionOf(tx), {
            table,
            runId,
            rowId,
            sequence,
            name,
            attempt: attempts,
          });
        }
        return { rowId, attempts, locked: false };
      });
    } catch (err) {
      if (err instanceof InsertRaced) return { kind: 'raced', row: err.row };
      if (err instanceof ClaimLost) claim = { rowId: err.rowId, attempts: null, locked: false };
      else throw err;
    }
  const rowId = claim.rowId;

  if (claim.locked) {
    // Another execution holds the overlap lock: this duplicate goes back to the queue instead of running.
    await enqueueJob(deps.prisma, {
      kind: 'wake-run',
      runId,
      availableAt: new Date(now.getTime() + deps.config.worker.poll_interval_ms * 4),
    });
    return { kind: 'not-here', waitingFor: `step ${sequence} (${name}) is locked by another worker`, lost: false };
  }
  if (claim.attempts === null) {
    // A compensation refused because the run's cleanup window closed under this replay (a terminate's fence,
    // review 66): no compensation starts, and the run's next replay closes it at its window. Wake it now: a
    // fenced run has no wake of its own, and this replay parks.
    if (isComp && (await cleanupWindowClosed(deps.prisma, runId, now)))
      await enqueueJob(deps.prisma, { kind: 'wake-run', runId, availableAt: now });
    return { kind: 'not-here', waitingFor: null, lost: true };
  }
  const attempts = claim.attempts;

  // A commit that silently became a rollback (an aborted PostgreSQL transaction) must not run the
  // step. Only foreign code inside the claim's transaction can cause one (a stepClaimed hook that
  // swallows a failed statement); the engine's own statements throw and roll back loudly, and the
  // claim's RETURNING already said what it wrote. So the claim is read back only when such a hook is
  // installed (ADR 0029); without one, a terminate that commits right after the claim is met by the
  // outcome's fence (write_refused), as one committing while the action runs is.
  if (deps.hooks.stepClaimed) {
    const after = await readStepClaim(deps.prisma, table, rowId);
    if (!after || after.attempts !== attempts || after.status !== 'Running') {
      await deps.journal({
        code: 'claim_not_committed',
        message: `the claim of step ${sequence} (${name}) was gone once its transaction closed; the step did not run`,
        runId,
        rowId,
        sequence,
        name,
        site: table,
        details: {
          claimed_attempts: attempts,
          row_attempts: after?.attempts ?? null,
          row_status: after?.status ?? null,
        },
      });
      return {
        kind: 'not-here',
        waitingFor: null,
        stuckReason: `claim_not_committed: the claim of step ${sequence} (${name}) did not commit; something inside the engine's transaction failed (see the anomaly log)`,
        lost: false,
      };
    }
    if (!after.runOpen) {
      // The run finished (terminated) right after the claim committed: the step must not start now.
      await deps.journal({
        code: 'write_refused',
        message: `the run finished once step ${sequence} (${name}) was claimed; the step did not run`,
        runId,
        rowId,
        sequence,
        name,
        site: `${table}.start`,
        details: { attempts },
      });
      return { kind: 'not-here', waitingFor: null, lost: true };
    }
  }
  const ref = { runId, rowId, sequence, name, attempt: attempts };
  const claimedStep: ClaimedStep = { table, runId, rowId, sequence, name, attempt: attempts };
  // With nobody listening the step goes on without a tick of its own (ADR 0049).
  if (isComp ? deps.emit.listens('compensation.step_started') : deps.emit.listens('action.started'))
    await (isComp
      ? deps.emit('compensation.step_started', { ...ref, level: step.level ?? 0 })
      : deps.emit('action.started', ref));
  if (deps.faults.afterClaim) await deps.faults.afterClaim(claimedStep);

  let outcome: StepOutcome;
  try {
    const output = (await step.action.run(step.input)) ?? null;
    // An output that cannot be stored exactly as JSON (a BigInt, NaN, a cycle, a lone surrogate,
    // too big: ADR 0013) is the action's failure, not a reason to abandon the row Running or to
    // store a converted value: check it here, where the failure can still be recorded.
    assertStorableJson(output, 'output', jsonRules(deps.config.limits, 'action_output_bytes'));
    outcome = { kind: 'completed', output };
  } catch (err) {
    const decision = decideRetry(step.retry, deps.config.retry, attempts, err);
    if (decision.policyThrew !== undefined) {
      await deps.journal({
        code: 'retry_policy_threw',
        message: `the retry policy of ${name} threw; the step fails without another try`,
        runId,
        rowId,
        sequence,
        name,
        details: serializeError(decision.policyThrew),
      });
    }
    const error = serializeError(err);
    outcome =
      decision.retryInMs === null
        ? { kind: 'errored', error }
        : { kind: 'failed', error, retryAt: new Date(deps.clock.now().getTime() + decision.retryInMs) };
  }
  if (deps.faults.beforeOutcome) await deps.faults.beforeOutcome(claimedStep);
  const lock = locks.enabled ? { key: `step:${table}:${rowId}`, owner: lockOwner } : undefined;

  const mine = {
    table,
    runId,
    rowId,
    sequence,
    name,
    attempts,
    ...(step.level === undefined ? {} : { level: step.level }),
    ...(lock ? { lock } : {}),
  };
  if (outcome.kind === 'completed') {
    const pending: PendingOutcome = { ...mine, output: outcome.output };
    if (!step.writeAlone) {
      // Buffered for the replay's next transaction; written at once when the replay has parked meanwhile.
      const late = session.buffer(pending);
      if (late) await late;
      return outcome;
    }
    const written = await session.writeOutcome(pending);
    if (written === 'recorded' || written === 'already') return outcome;
    return { kind: 'not-here', waitingFor: null, lost: true, rejected: true };
  }

  const failure = outcome;
  const held: PendingOutcome = { ...mine, output: null, failure };
  // The replay is over (parked, given up, finished): the failure is written on its own, with a wake
  // (review 24: with no wake, a newer replay parked on this step as running here waited for ever).
  const late = session.writeIfLate(held);
  if (late) {
    await late;
    // Written (or journaled as lost) by the late write itself: nothing more to journal here.
    return { kind: 'not-here', waitingFor: null, lost: true, rejected: true };
  }
  let written: OutcomeWrite;
  try {
    written = await session.tx((tx) => writePendingOutcome(tx, held, deps.clock.now()));
  } catch (err) {
    // The replay stopped meanwhile, or a buffered outcome of an earlier step was lost and it is stale:
    // the failure still happened, and stands on its own fence, written by the park or the flush (or at
    // once, when the flush has run); refused there, it is journaled (review 24).
    if (err instanceof ReplayConflict) {
      await session.keep([held]);
      return { kind: 'not-here', waitingFor: null, lost: true, rejected: true };
    }
    // The database failed the write: the failure is kept like a completion (ADR 0010), and written
    // by the replay's abort, so the step does not stay Running under a live worker for want of it.
    await session.keep([held]);
    throw err;
  }

  // A park of this replay's that does not land owes the run a wake for it (ADR 0087), as for a completion.
  if (written === 'recorded') session.recordedOutcome = true;
  if (written === 'rejected' || written === 'refused') {
    await reportLostOutcome(deps, held, written, failure);
    return { kind: 'not-here', waitingFor: null, lost: true, rejected: true };
  }
  const failed = { ...ref, error: failure.error, willRetry: failure.kind === 'failed' };
  await (isComp
    ? deps.emit('compensation.failed', { ...failed, level: step.level ?? 0 })
    : deps.emit('action.failed', failed));
  if (failure.kind === 'errored') return { kind: 'errored', error: failure.error };
  return {
    kind: 'not-here',
    waitingFor: `retry of step ${sequence} (${name}) at ${failure.retryAt.toISOString()}`,
    lost: false,
  };
}

/** Thrown inside the claim transaction to roll back the lock a lost claim took. */
class ClaimLost extends Error {
  constructor(readonly rowId: string) {
    super('claim lost');
  }
}

/** Thrown inside the claim transaction: another replay scheduled this step first. */
class InsertRaced extends Error {
  constructor(readonly row: DbActionRun) {
    super('step recorded by another replay');
  }
}
