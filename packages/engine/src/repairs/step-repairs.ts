import type { Json } from '../definitions/define-action.ts';
import { EngineError } from '../errors/engine-error.ts';
import { assertStorableJson } from '../input/assert-storable-json.ts';
import { jsonRules } from '../input/input-limits.ts';
import { validateAgainstSchema } from '../input/validate-against-schema.ts';
import { writePendingOutcome } from '../runtime/steps/pending-outcome.ts';
import { appendFlowEvent } from '../store/append-flow-event.ts';
import { claimStep } from '../store/claim-step.ts';
import { enqueueJob } from '../store/enqueue-job.ts';
import { advanceHistoryEpoch } from '../store/repairs/advance-history-epoch.ts';
import { forgetStepsFrom } from '../store/repairs/forget-steps-from.ts';
import { makeStepDue } from '../store/repairs/make-step-due.ts';
import { openActionStepStatuses, type Db } from '../store/types.ts';
import type { RepairCommandOf } from './repair-command.ts';
import { noEffects } from './repair-effects.ts';
import type { RepairDeps, RepairHandler, RunTarget } from './repair-handler.ts';

const wake = (runId: string, at: Date) => ({ kind: 'wake-run' as const, runId, availableAt: at.toISOString() });

function stepOf(target: RunTarget, sequence: number): NonNullable<RunTarget['step']> {
  if (!target.step) throw new EngineError('repair_refused', `run ${target.run.id} has no step ${sequence}`);
  return target.step;
}

async function laterSteps(db: Db, runId: string, sequence: number): Promise<number> {
  return db.actionRun.count({ where: { run_id: runId, sequence: { gt: sequence } } });
}

/** What a step repair does to a replay in progress (ADR 0085), said in its preview. */
const staleReplayNote =
  'a replay that read the steps before this repair (a worker running the run now) writes nothing more: the run replays from the repaired record';

export const retryStepRepair: RepairHandler<RepairCommandOf<'run.retry_step'>, RunTarget> = {
  async plan(db, deps, cmd, target) {
    const step = stepOf(target, cmd.target.stepSequence);
    const blockers: string[] = [];
    if (step.kind !== 'action') blockers.push(`step ${step.sequence} is a ${step.kind} step, not an action`);
    if (step.status !== 'Failed' && step.status !== 'Errored')
      blockers.push(`step ${step.sequence} is ${step.status}; only a Failed or Errored step can be retried`);
    if (step.status === 'Errored') {
      // The code went on from the error: a retry that succeeds would contradict what it recorded since.
      if ((await laterSteps(db, target.run.id, step.sequence)) > 0)
        blockers.push(`steps after ${step.sequence} are recorded; resume from step ${step.sequence} instead`);
      if ((await db.compensationRun.count({ where: { run_id: target.run.id } })) > 0)
        blockers.push('the run has started compensating; a retry cannot undo that');
    }
    const effects = noEffects();
    const now = deps.runtime.clock.now();
    if (step.status === 'Errored')
      effects.transitions.push({ subject: `step ${step.sequence} (${step.name})`, from: 'Errored', to: 'Pending' });
    else effects.notes.push(`step ${step.sequence} (${step.name}) is due now instead of at its retry time`);
    effects.jobs.push(wake(target.run.id, now));
    effects.notes.push(staleReplayNote);
    effects.history.push('action.retry_requested');
    return { blockers, effects };
  },
  async perform(tx, _deps, _cmd, target, _p, { now, id }) {
    const step = stepOf(target, _cmd.target.stepSequence);
    const status = step.status as 'Failed' | 'Errored';
    if (!(await makeStepDue(tx, { id: step.id, status, attempts: step.attempts, now })))
      throw new EngineError('repair_refused', `step ${step.sequence} changed under the lock`);
    await appendFlowEvent(tx, {
      runId: target.run.id,
      type: 'action.retry_requested',
      sequence: step.sequence,
      rowId: step.id,
      data: { name: step.name, was: status, repair: id },
    });
    await advanceHistoryEpoch(tx, { runId: target.run.id, now });
    await enqueueJob(tx, { kind: 'wake-run', runId: target.run.id, availableAt: now });
    return {};
  },
};

/**
 * The operator's output checked against the action's output schema, when the action declares one
 * and is registered here: a value the action itself could not have returned is bad input, refused
 * before anything is written (`output.chargeId: ...`). Returns the value as the schema produced it.
 */
async function prepareOutput(
  deps: RepairDeps,
  cmd: RepairCommandOf<'run.complete_step'>,
  target: RunTarget,
): Promise<{ output: Json }> {
  const output = cmd.output as Json;
  const schema = target.step ? deps.runtime.registry.actions.get(target.step.name)?.schemas.output : undefined;
  if (!schema || target.step?.kind !== 'action') return { output };
  const checked = (await validateAgainstSchema(schema, output, 'output')) as Json;
  if (checked !== output)
    assertStorableJson(checked, 'output', jsonRules(deps.runtime.config.limits, 'action_output_bytes'));
  return { output: checked };
}

export const completeStepRepair: RepairHandler<RepairCommandOf<'run.complete_step'>, RunTarget, { output: Json }> = {
  prepare: prepareOutput,
  async plan(_db, deps, cmd, target) {
    const step = stepOf(target, cmd.target.stepSequence);
    const blockers: string[] = [];
    if (step.kind !== 'action') blockers.push(`step ${step.sequence} is a ${step.kind} step, not an action`);
    if (!openActionStepStatuses.includes(step.status))
      blockers.push(`step ${step.sequence} is ${step.status}; only a Pending, Running or Failed step can be completed`);
    if (target.run.cancel_requested_at && step.status !== 'Running')
      blockers.push('the run is being cancelled: a step that has not started is cancelled, not completed');
    const effects = noEffects();
    effects.transitions.push({ subject: `step ${step.sequence} (${step.name})`, from: step.status, to: 'Completed' });
    if (step.status === 'Running')
      effects.notes.push(
        `a worker still running attempt ${step.attempts} has its outcome rejected (outcome_rejected) when it reports`,
      );
    effects.history.push('action.completed');
    effects.jobs.push(wake(target.run.id, deps.runtime.clock.now()));
    effects.notes.push(staleReplayNote);
    return { blockers, effects };
  },
  async perform(tx, deps, cmd, target, { output }, { now, id }) {
    const step = stepOf(target, cmd.target.stepSequence);
    let attempts = step.attempts;
    if (step.status !== 'Running') {
      // The engine's own claim, on the repair's behalf: the completion is fenced like a worker's.
      if (step.status === 'Failed') await makeStepDue(tx, { id: step.id, status: 'Failed', attempts, now });
      const claimed = await claimStep(tx, { table: 'action_runs', id: step.id, workerId: `repair:${id}`, now });
      if (claimed === null) throw new EngineError('repair_refused', `step ${step.sequence} could not be claimed`);
      attempts = claimed;
    }
    const written = await writePendingOutcome(
      tx,
      {
        table: 'action_runs',
        runId: target.run.id,
        rowId: step.id,
        sequence: step.sequence,
        name: step.name,
        attempts,
        output,
      },
      now,
    );
    if (written !== 'recorded')
      throw new EngineError('repair_refused', `step ${step.sequence}'s outcome was ${written}: the row changed hands`);
    await advanceHistoryEpoch(tx, { runId: target.run.id, now });
    await enqueueJob(tx, { kind: 'wake-run', runId: target.run.id, availableAt: now });
    return {
      after: () =>
        deps.runtime.emit('action.completed', {
          runId: target.run.id,
          rowId: step.id,
          sequence: step.sequence,
          name: step.name,
          attempt: attempts,
          output,
        }),
    };
  },
};

export const resumeFromStepRepair: RepairHandler<RepairCommandOf<'run.resume_from_step'>, RunTarget> = {
  async plan(db, deps, cmd, target) {
    const step = stepOf(target, cmd.target.stepSequence);
    const { run } = target;
    const blockers: string[] = [];
    if (run.cancel_requested_at || run.expired_at)
      blockers.push('the run is being cancelled or expired; its rollback replays the record as it is');
    if ((await db.compensationRun.count({ where: { run_id: run.id } })) > 0)
      blockers.push('the run has compensations recorded; they undo the steps as they were recorded');
    const forgotten = await db.actionRun.findMany({
      where: { run_id: run.id, sequence: { gte: step.sequence } },
      orderBy: { sequence: 'asc' },
      select: { sequence: true, kind: true, name: true, status: true, attempts: true },
    });
    const children = forgotten.filter((s) => s.kind === 'child');
    if (children.length > 0)
      blockers.push(`step ${children.map((c) => c.sequence).join(', ')} started a child run, which would be orphaned`);
    const effects = noEffects();
    for (const s of forgotten)
      effects.transitions.push({
        subject: `step ${s.sequence} (${s.kind} ${s.name})`,
        from: s.status,
        to: 'forgotten',
      });
    // A step a worker holds now keeps running there: its outcome is refused when it reports, and the
    // step runs again from the start, so its side effect may happen twice (review 40).
    for (const s of forgotten)
      if (s.status === 'Running' && s.kind === 'action')
        effects.notes.push(
          `step ${s.sequence} (${s.name}) is Running: a worker still running attempt ${s.attempts} finishes it, ` +
            'but its outcome is refused (outcome_rejected) and the step runs again from the start: ' +
            'its side effect may happen twice unless the action is idempotent',
        );
    effects.history.push('run.resumed_from_step');
    effects.jobs.push(wake(run.id, deps.runtime.clock.now()));
    effects.notes.push(staleReplayNote);
    effects.notes.push(
      `the next replay runs step ${step.sequence} and what follows with the code deployed now; signals those steps consumed wait for them again`,
    );
    return { blockers, effects };
  },
  async perform(tx, _deps, cmd, target, _p, { now, id }) {
    const forgotten = await forgetStepsFrom(tx, target.run.id, cmd.target.stepSequence);
    forgotten.sort((a, b) => a.sequence - b.sequence);
    await appendFlowEvent(tx, {
      runId: target.run.id,
      type: 'run.resumed_from_step',
      sequence: cmd.target.stepSequence,
      data: { repair: id, forgotten: forgotten as unknown as Json },
    });
    await advanceHistoryEpoch(tx, { runId: target.run.id, now });
    await enqueueJob(tx, { kind: 'wake-run', runId: target.run.id, availableAt: now });
    return {};
  },
};
