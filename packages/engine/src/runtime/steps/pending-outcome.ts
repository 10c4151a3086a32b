import type { RawDb } from '../../db/raw-db.ts';
import type { Json } from '../../definitions/define-action.ts';
import { Prisma } from '../../generated/prisma/client.ts';
import { releaseLock } from '../../store/acquire-lock.ts';
import { recordStepOutcome } from '../../store/record-step-outcome.ts';
import { enqueueJob } from '../../store/enqueue-job.ts';
import type { StepOutcome } from '../../store/record-step-outcome.ts';
import type { StepEvent } from '../../store/step-event.ts';
import { tableSql, type StepTable } from '../../store/step-table.ts';
import type { EngineEventName } from '../engine-events.ts';
import type { RuntimeDeps } from '../runtime-deps.ts';
import { statusIs } from '../../store/keyed-status.ts';

/**
 * A finished step whose outcome is not written yet: a completion waiting for the replay's next
 * transaction, or (with `failure`) a failure whose write met a database outage.
 */
export interface PendingOutcome {
  table: StepTable;
  runId: string;
  rowId: string;
  sequence: number;
  name: string;
  attempts: number;
  output: Json;
  level?: number;
  lock?: { key: string; owner: string };
  /** The step failed instead: a retry is due at `retryAt` (failed), or it ended (errored). */
  failure?: Extract<StepOutcome, { kind: 'failed' | 'errored' }>;
}

export const outcomeOf = (o: PendingOutcome): StepOutcome => o.failure ?? { kind: 'completed', output: o.output };
const statusOf = { completed: 'Completed', failed: 'Failed', errored: 'Errored' } as const;

/** What became of one fenced outcome write; `already`: an earlier commit of ours whose acknowledgement was lost. */
export type OutcomeWrite = 'recorded' | 'already' | 'rejected' | 'refused';

/** The fenced outcome write with its history row (and the lock's release), inside the caller's transaction. */
export async function writePendingOutcome(tx: RawDb, o: PendingOutcome, now: Date): Promise<OutcomeWrite> {
  const outcome = outcomeOf(o);
  // The history row rides on the fenced write: it lands exactly when the outcome does.
  const event = outcomeEvent(o);
  const result = await recordStepOutcome(tx, {
    table: o.table,
    id: o.rowId,
    attempts: o.attempts,
    outcome,
    now,
    event,
  });
  if (o.lock) await releaseLock(tx, o.lock);
  if (result === 'rejected' && (await alreadyOurs(tx, o))) return 'already';
  if (result !== 'recorded') return result;
  if (outcome.kind === 'failed')
    await enqueueJob(tx, { kind: 'wake-run', runId: o.runId, availableAt: outcome.retryAt });
  return result;
}

/** The history row of a recorded outcome (its attempt is taken from the row the write updated). */
export function outcomeEvent(o: PendingOutcome): StepEvent {
  const outcome = outcomeOf(o);
  const prefix = o.table === 'compensation_runs' ? 'compensation' : 'action';
  const what = outcome.kind === 'completed' ? 'completed' : outcome.kind === 'failed' ? 'retry_scheduled' : 'failed';
  return { type: `${prefix}.${what}`, sequence: o.sequence, data: { name: o.name } };
}

/**
 * A rejected write whose row holds our own claim's outcome: a transaction that committed but whose
 * acknowledgement was lost (the database went away at COMMIT) was retried. Nothing was lost.
 * Ours means the same status, attempt and value: an operator's complete_step settles the row under
 * the same attempt with its own output, and that is a loss for this worker, never a success.
 */
async function alreadyOurs(tx: RawDb, o: PendingOutcome): Promise<boolean> {
  const outcome = outcomeOf(o);
  const value = JSON.stringify(outcome.kind === 'completed' ? outcome.output : outcome.error);
  const column = Prisma.raw(outcome.kind === 'completed' ? 'output' : 'error');
  const rows = await tx.$queryRaw<{ ours: boolean }[]>(Prisma.sql`
    select true as ours from ${tableSql(o.table)} s
     where s.id = ${o.rowId}::uuid and ${statusIs('s.status', statusOf[outcome.kind])} and s.attempts = ${o.attempts}::int
       and s.${column} = ${value}::jsonb`);
  return rows.length === 1;
}

/**
 * Writes outcomes each on its own fence, in the caller's transaction: a rejected one never takes
 * another's write with it (the statements are conditional updates, never errors, so one loss does
 * not abort the transaction).
 */
export async function writePendingOutcomes(
  tx: RawDb,
  outcomes: PendingOutcome[],
  now: Date,
): Promise<{ outcome: PendingOutcome; result: OutcomeWrite }[]> {
  const fates: { outcome: PendingOutcome; result: OutcomeWrite }[] = [];
  for (const outcome of outcomes) fates.push({ outcome, result: await writePendingOutcome(tx, outcome, now) });
  return fates;
}

/** After the commit: each recorded outcome's event, each lost one journaled with its payload. */
export function announceOutcomes(
  deps: RuntimeDeps,
  fates: { outcome: PendingOutcome; result: OutcomeWrite }[],
): Promise<void> {
  // Outcomes recorded with nobody listening (a step's usual case) cost no async frame (ADR 0049).
  if (fates.every(({ outcome, result }) => isRecorded(result) && !deps.emit.listens(recordedEvent(outcome))))
    return Promise.resolve();
  return announceEach(deps, fates);
}

async function announceEach(
  deps: RuntimeDeps,
  fates: { outcome: PendingOutcome; result: OutcomeWrite }[],
): Promise<void> {
  for (const { outcome, result } of fates) {
    if (isRecorded(result)) await emitRecorded(deps, outcome);
    else await reportLostOutcome(deps, outcome, result, outcomeOf(outcome));
  }
}

const isRecorded = (result: OutcomeWrite) => result === 'recorded' || result === 'already';

/** The event {@link emitRecorded} sends for `o`. */
function recordedEvent(o: PendingOutcome): EngineEventName {
  if (o.table === 'compensation_runs') return o.failure ? 'compensation.failed' : 'compensation.completed';
  return o.failure ? 'action.failed' : 'action.completed';
}

/** The in-process event of a recorded outcome (after its commit); its payload is built only for a listener. */
export function emitRecorded(deps: RuntimeDeps, o: PendingOutcome): Promise<void> {
  if (!deps.emit.listens(recordedEvent(o))) return Promise.resolve();
  const ref = { runId: o.runId, rowId: o.rowId, sequence: o.sequence, name: o.name, attempt: o.attempts };
  if (o.failure) {
    const failed = { ...ref, error: o.failure.error, willRetry: o.failure.kind === 'failed' };
    return o.table === 'compensation_runs'
      ? deps.emit('compensation.failed', { ...failed, level: o.level ?? 0 })
      : deps.emit('action.failed', failed);
  }
  return o.table === 'compensation_runs'
    ? deps.emit('compensation.completed', { ...ref, level: o.level ?? 0, output: o.output })
    : deps.emit('action.completed', { ...ref, output: o.output });
}

/** The loser's side of the fence: journal, and hand the dropped result to the rejection event. */
export async function reportLostOutcome(
  deps: RuntimeDeps,
  o: Omit<PendingOutcome, 'output' | 'lock'> & { output?: Json },
  result: 'rejected' | 'refused',
  outcome: { kind: 'completed'; output: Json } | { kind: 'failed' | 'errored'; error: Json } = {
    kind: 'completed',
    output: (o as PendingOutcome).output ?? null,
  },
): Promise<void> {
  await deps.journal({
    code: result === 'refused' ? 'write_refused' : 'outcome_rejected',
    message:
      result === 'refused'
        ? `the outcome of step ${o.sequence} (${o.name}) was refused: its run has finished`
        : `the outcome of step ${o.sequence} (${o.name}) was rejected: the row changed hands`,
    runId: o.runId,
    rowId: o.rowId,
    sequence: o.sequence,
    name: o.name,
    site: `${o.table}.outcome`,
    details: { attempts: o.attempts, outcome: outcome.kind },
  });
  const payload = {
    runId: o.runId,
    rowId: o.rowId,
    sequence: o.sequence,
    name: o.name,
    attempt: o.attempts,
    outcome: outcome.kind === 'completed' ? ('completed' as const) : ('failed' as const),
    output: outcome.kind === 'completed' ? outcome.output : null,
    error: outcome.kind === 'completed' ? null : outcome.error,
  };
  await (o.table === 'compensation_runs'
    ? deps.emit('compensation.outcome_rejected', { ...payload, level: o.level ?? 0 })
    : deps.emit('action.outcome_rejected', payload));
}
