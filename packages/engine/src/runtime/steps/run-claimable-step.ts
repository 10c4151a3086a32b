import { randomUUID } from 'node:crypto';
import type { ActionDefinition, Json, RetryPolicy } from '../../definitions/define-action.ts';
import { acquireLock, releaseLock } from '../../store/acquire-lock.ts';
import { appendFlowEvent } from '../../store/append-flow-event.ts';
import { claimStep } from '../../store/claim-step.ts';
import { enqueueJob } from '../../store/enqueue-job.ts';
import { readStepClaim } from '../../store/read-step-claim.ts';
import { recordStepOutcome, type StepOutcome } from '../../store/record-step-outcome.ts';
import type { StepTable } from '../../store/step-table.ts';
import { serializeError } from '../flow-error.ts';
import type { ReplaySession } from '../replay/replay-session.ts';
import { decideRetry } from '../decide-retry.ts';
import type { ClaimedStep } from '../runtime-deps.ts';

/** How a claimable step (an action or a compensation) ended for this replay. */
export type ClaimableResult =
  | { kind: 'completed'; output: Json }
  | { kind: 'errored'; error: Json }
  /** Not finished here: retry scheduled, claim lost, lock held, outcome rejected, claim not committed. */
  | { kind: 'not-here'; waitingFor: string | null; stuckReason?: string; lost: boolean; rejected?: boolean };

export interface ClaimableStep {
  table: StepTable;
  rowId: string;
  sequence: number;
  name: string;
  input: Json;
  action: ActionDefinition<Json, Json>;
  retry: RetryPolicy;
  /** For compensations: the rollback level (events carry it). */
  level?: number;
}

/**
 * Claims, executes and records one step, fenced by its claim: ONE conditional update to claim, a
 * read-back after the claim's transaction closed, the action, and an outcome write conditional on
 * the claim's attempts and the row still Running. A worker that loses anywhere records nothing and
 * says so in the anomaly journal.
 */
export async function runClaimableStep(session: ReplaySession, step: ClaimableStep): Promise<ClaimableResult> {
  const { deps } = session;
  const { table, rowId, sequence, name } = step;
  const runId = session.runId;
  const lockKey = `step:${table}:${rowId}`;
  // The lock belongs to this execution, not to the process: two replays in one process exclude each other too.
  const lockOwner = `${deps.workerId}:${randomUUID()}`;
  const locks = deps.config.locks;
  const isComp = table === 'compensation_runs';
  await deps.faults.beforeClaim?.({ table, runId, rowId, sequence, name, attempt: 0 });
  const now = deps.clock.now();

  const claim = await session
    .tx(async (tx) => {
      if (
        locks.enabled &&
        !(await acquireLock(tx, { key: lockKey, owner: lockOwner, ttlSeconds: locks.action_ttl_seconds, now }))
      ) {
        return { attempts: null, locked: true };
      }
      const attempts = await claimStep(tx, { table, id: rowId, workerId: deps.workerId, now });
      // A lost claim must not leave the lock it took behind: roll the whole transaction back.
      if (attempts === null && locks.enabled) throw new ClaimLost();
      if (attempts !== null) {
        const claimed: ClaimedStep = { table, runId, rowId, sequence, name, attempt: attempts };
        await appendFlowEvent(tx, {
          runId,
          type: isComp ? 'compensation.step_started' : 'action.started',
          sequence,
          rowId,
          data: { name, attempt: attempts, ...(isComp ? { level: step.level ?? 0 } : {}) },
        });
        await deps.hooks.stepClaimed?.(tx, claimed);
      }
      return { attempts, locked: false };
    })
    .catch((err: unknown) => {
      if (err instanceof ClaimLost) return { attempts: null, locked: false };
      throw err;
    });

  if (claim.locked) {
    // Another worker holds the overlap lock: this duplicate goes back to the queue instead of running.
    await enqueueJob(deps.prisma, {
      kind: 'wake-run',
      runId,
      availableAt: new Date(now.getTime() + deps.config.worker.poll_interval_ms * 4),
    });
    return { kind: 'not-here', waitingFor: `step ${sequence} (${name}) is locked by another worker`, lost: false };
  }
  if (claim.attempts === null) return { kind: 'not-here', waitingFor: null, lost: true };
  const attempts = claim.attempts;

  // A commit that silently became a rollback (an aborted PostgreSQL transaction) must not run the step.
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
      details: { claimed_attempts: attempts, row_attempts: after?.attempts ?? null, row_status: after?.status ?? null },
    });
    return {
      kind: 'not-here',
      waitingFor: null,
      stuckReason: `claim_not_committed: the claim of step ${sequence} (${name}) did not commit; something inside the engine's transaction failed (see the anomaly log)`,
      lost: false,
    };
  }
  const ref = { runId, rowId, sequence, name, attempt: attempts };
  const claimedStep: ClaimedStep = { table, ...ref };
  await (isComp
    ? deps.emit('compensation.step_started', { ...ref, level: step.level ?? 0 })
    : deps.emit('action.started', ref));
  await deps.faults.afterClaim?.(claimedStep);

  let outcome: StepOutcome;
  try {
    const output = (await step.action.run(step.input)) ?? null;
    // An output that cannot be stored as JSON (a BigInt, a cycle) is the action's failure, not a
    // reason to abandon the row Running: check it here, where it can still be recorded.
    JSON.stringify(output);
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
  await deps.faults.beforeOutcome?.(claimedStep);

  const at = deps.clock.now();
  const written = await deps.prisma.$transaction(async (tx) => {
    const result = await recordStepOutcome(tx, { table, id: rowId, attempts, outcome, now: at });
    if (locks.enabled) await releaseLock(tx, { key: lockKey, owner: lockOwner });
    if (result !== 'recorded') return result;
    const type = outcome.kind === 'completed' ? 'completed' : outcome.kind === 'failed' ? 'retry_scheduled' : 'failed';
    await appendFlowEvent(tx, {
      runId,
      type: `${isComp ? 'compensation' : 'action'}.${type}`,
      sequence,
      rowId,
      data: { name, attempt: attempts },
    });
    if (outcome.kind === 'failed') await enqueueJob(tx, { kind: 'wake-run', runId, availableAt: outcome.retryAt });
    return result;
  });

  if (written !== 'recorded') {
    await deps.journal({
      code: written === 'refused' ? 'write_refused' : 'outcome_rejected',
      message:
        written === 'refused'
          ? `the outcome of step ${sequence} (${name}) was refused: its run has finished`
          : `the outcome of step ${sequence} (${name}) was rejected: the row changed hands`,
      runId,
      rowId,
      sequence,
      name,
      site: `${table}.outcome`,
      details: { attempts, outcome: outcome.kind },
    });
    const payload = {
      ...ref,
      outcome: outcome.kind === 'completed' ? ('completed' as const) : ('failed' as const),
      output: outcome.kind === 'completed' ? outcome.output : null,
      error: outcome.kind === 'completed' ? null : outcome.error,
    };
    await (isComp
      ? deps.emit('compensation.outcome_rejected', { ...payload, level: step.level ?? 0 })
      : deps.emit('action.outcome_rejected', payload));
    return { kind: 'not-here', waitingFor: null, lost: true, rejected: true };
  }

  if (outcome.kind === 'completed') {
    await (isComp
      ? deps.emit('compensation.completed', { ...ref, level: step.level ?? 0, output: outcome.output })
      : deps.emit('action.completed', { ...ref, output: outcome.output }));
    return outcome;
  }
  const failed = { ...ref, error: outcome.error, willRetry: outcome.kind === 'failed' };
  await (isComp
    ? deps.emit('compensation.failed', { ...failed, level: step.level ?? 0 })
    : deps.emit('action.failed', failed));
  if (outcome.kind === 'errored') return outcome;
  return {
    kind: 'not-here',
    waitingFor: `retry of step ${sequence} (${name}) at ${outcome.retryAt.toISOString()}`,
    lost: false,
  };
}

/** Thrown inside the claim transaction to roll back the lock a lost claim took. */
class ClaimLost extends Error {}
