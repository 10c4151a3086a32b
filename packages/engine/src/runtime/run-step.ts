import type { Json } from '../definitions/define-action.ts';
import { appendFlowEvent } from '../store/append-flow-event.ts';
import { claimActionRun } from '../store/claim-action-run.ts';
import { enqueueJob } from '../store/enqueue-job.ts';
import { insertActionRun } from '../store/insert-action-run.ts';
import { readActionClaim } from '../store/read-action-claim.ts';
import { recordActionOutcome, type ActionOutcome } from '../store/record-action-outcome.ts';
import { serializeError } from './action-failed-error.ts';
import { retryDelayMs } from './retry-delay.ts';
import type { RuntimeDeps } from './runtime-deps.ts';

export type StepResult =
  { kind: 'completed'; output: Json } | { kind: 'errored'; error: Json } | { kind: 'parked'; reason: string | null };

/** Schedules (if new), claims, executes and records one action step, fenced by its claim. */
export async function runStep(
  deps: RuntimeDeps,
  step: { runId: string; sequence: number; name: string; input: Json; exists: boolean },
): Promise<StepResult> {
  const action = deps.registry.actions.get(step.name);
  if (!action)
    return { kind: 'parked', reason: `unknown_action: no action named "${step.name}" is registered on this worker` };
  const { runId, sequence, name } = step;

  const claimed = await deps.prisma.$transaction(async (tx) => {
    if (!step.exists) {
      await insertActionRun(tx, { runId, sequence, name, input: step.input, maxAttempts: action.retry.maxAttempts });
    }
    const row = await tx.actionRun.findUniqueOrThrow({
      where: { run_id_sequence: { run_id: runId, sequence } },
      select: { id: true },
    });
    const attempts = await claimActionRun(tx, { id: row.id, workerId: deps.workerId });
    if (attempts !== null) {
      await appendFlowEvent(tx, {
        runId,
        type: 'action.started',
        sequence,
        rowId: row.id,
        data: { name, attempt: attempts },
      });
    }
    return { id: row.id, attempts };
  });

  if (claimed.attempts === null) return settleLostClaim(deps, { runId, sequence, name, id: claimed.id });

  // Read the claim back after its transaction closed: a commit that silently became a rollback
  // (an aborted PostgreSQL transaction) must not run the step.
  const after = await readActionClaim(deps.prisma, claimed.id);
  if (!after || after.attempts !== claimed.attempts || after.status !== 'Running') {
    await deps.journal({
      code: 'claim_not_committed',
      message: `claim of step ${sequence} did not commit`,
      runId,
      rowId: claimed.id,
      sequence,
      name,
      details: { claimed_attempts: claimed.attempts, row_attempts: after?.attempts ?? null },
    });
    return { kind: 'parked', reason: null };
  }

  let outcome: ActionOutcome;
  try {
    outcome = { kind: 'completed', output: (await action.run(step.input)) ?? null };
  } catch (err) {
    const error = serializeError(err);
    outcome =
      claimed.attempts < action.retry.maxAttempts
        ? { kind: 'failed', error, retryAt: new Date(Date.now() + retryDelayMs(deps.config.retry, claimed.attempts)) }
        : { kind: 'errored', error };
  }

  const landed = await deps.prisma.$transaction(async (tx) => {
    const ok = await recordActionOutcome(tx, { id: claimed.id, attempts: claimed.attempts as number, outcome });
    if (!ok) return false;
    const type =
      outcome.kind === 'completed'
        ? 'action.completed'
        : outcome.kind === 'failed'
          ? 'action.retry_scheduled'
          : 'action.failed';
    await appendFlowEvent(tx, {
      runId,
      type,
      sequence,
      rowId: claimed.id,
      data: { name, attempt: claimed.attempts as number },
    });
    if (outcome.kind === 'failed') await enqueueJob(tx, { kind: 'wake-run', runId, availableAt: outcome.retryAt });
    return true;
  });
  if (!landed) {
    await deps.journal({
      code: 'outcome_rejected',
      message: `outcome of step ${sequence} was rejected: the row changed hands`,
      runId,
      rowId: claimed.id,
      sequence,
      name,
      details: { attempts: claimed.attempts, outcome: outcome.kind },
    });
    return { kind: 'parked', reason: null };
  }
  if (outcome.kind === 'completed') return outcome;
  if (outcome.kind === 'errored') return outcome;
  return { kind: 'parked', reason: null };
}

async function settleLostClaim(
  deps: RuntimeDeps,
  step: { runId: string; sequence: number; name: string; id: string },
): Promise<StepResult> {
  const row = await deps.prisma.actionRun.findUniqueOrThrow({ where: { id: step.id } });
  if (row.status === 'Completed') return { kind: 'completed', output: row.output as Json };
  if (row.status === 'Errored') return { kind: 'errored', error: row.error as Json };
  if (row.status === 'Running') {
    await deps.journal({
      code: 'claim_lost',
      message: `step ${step.sequence} is already owned; not executing it`,
      runId: step.runId,
      rowId: step.id,
      sequence: step.sequence,
      name: step.name,
      details: { attempts: row.attempts },
    });
  }
  // Failed with a retry time still ahead: its wake job is already scheduled.
  return { kind: 'parked', reason: null };
}
