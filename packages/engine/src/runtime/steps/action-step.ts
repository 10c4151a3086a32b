import type { ActionDefinition, Json, RetryPolicy } from '../../definitions/define-action.ts';
import { cancelWaitingStep } from '../../store/cancel-waiting-step.ts';
import { resolveReclaimSeconds, type ReclaimOverride } from '../resolve-reclaim.ts';
import type { ReplaySession } from '../replay/replay-session.ts';
import { checkHistory } from './check-history.ts';
import { deliverCancel } from './deliver-cancel.ts';
import { runClaimableStep } from './run-claimable-step.ts';
import { settleLostClaim } from './settle-lost-claim.ts';

export interface ActionStepSpec {
  action: ActionDefinition<Json, Json>;
  input: Json;
  retry: RetryPolicy;
  reclaim: ReclaimOverride;
  expiresInSeconds: number | null;
  parallelBlock: number | null;
}

export type ActionStepResult =
  | { kind: 'completed'; output: Json }
  | { kind: 'errored'; error: Json }
  | { kind: 'cancelled' }
  | { kind: 'blocked' }
  /** Not finished by this replay; `running` means it is in another worker's hands right now. */
  | { kind: 'pending'; waitingFor: string | null; stuckReason?: string; running: boolean };

/** One action step at `seq`: recorded result on replay, else schedule → claim → run → record. */
export async function runActionStep(
  session: ReplaySession,
  seq: number,
  spec: ActionStepSpec,
): Promise<ActionStepResult> {
  const { deps } = session;
  const name = spec.action.name;
  const verdict = checkHistory(session, seq, 'action', name);
  if (verdict.kind === 'blocked') return { kind: 'blocked' };
  if (verdict.kind === 'cancel-delivered') return { kind: 'cancelled' };
  if (verdict.kind === 'deliver-cancel') {
    await deliverCancel(session, seq);
    return { kind: 'cancelled' };
  }
  const row = verdict.kind === 'recorded' ? verdict.row : undefined;
  if (row?.status === 'Completed') return { kind: 'completed', output: row.output as Json };
  if (row?.status === 'Errored') return { kind: 'errored', error: row.error as Json };
  // A step cancelled at the request of a cancellation is where that cancellation was delivered.
  if (row?.status === 'Cancelled' && session.cancelRequested) {
    session.cancellationDelivered = true;
    return { kind: 'cancelled' };
  }
  if (
    row &&
    (row.status === 'Pending' || row.status === 'Failed') &&
    session.cancelRequested &&
    !session.cancellationDelivered
  ) {
    // A step waiting for its first try or its retry is interrupted, like a wait: cancellation lands here.
    session.cancellationDelivered = true;
    const id = row.id;
    const cancelled = await session.tx((tx) => cancelWaitingStep(tx, { id, now: deps.clock.now() }));
    if (cancelled) return { kind: 'cancelled' };
    session.cancellationDelivered = false;
    session.recorded.set(seq, await deps.prisma.actionRun.findUniqueOrThrow({ where: { id } }));
    return runActionStep(session, seq, spec);
  }
  if (row && row.status !== 'Pending' && row.status !== 'Failed' && row.status !== 'Running') {
    // Expired or Cancelled under us (the monitor, an operator): the step did not succeed.
    return {
      kind: 'errored',
      error: (row.error as Json) ?? { name: 'StepNotCompleted', message: `step ${seq} (${name}) ended ${row.status}` },
    };
  }
  const now = deps.clock.now();
  const result = await runClaimableStep(session, {
    table: 'action_runs',
    row: row
      ? { id: row.id }
      : {
          insert: {
            runId: session.runId,
            sequence: seq,
            kind: 'action',
            name,
            input: spec.input,
            maxAttempts: spec.retry.maxAttempts ?? 1,
            parallelBlock: spec.parallelBlock,
            reclaimAfterSeconds: resolveReclaimSeconds(spec.reclaim, deps.config.reclaim.actions),
            expiresAt: expiresAt(now, spec.expiresInSeconds ?? deps.config.monitor.expiration.defaults.action),
          },
        },
    sequence: seq,
    name,
    // A step the start claimed for this replay runs with the code's input, as a new step does (ADR 0048).
    input: row && !session.hasStartClaim(row.id) ? (row.input as Json) : spec.input,
    action: spec.action,
    retry: spec.retry,
    writeAlone: spec.parallelBlock !== null,
  });
  if (result.kind === 'raced') {
    // Another replay recorded this step first: judge its record like any recorded step.
    session.recorded.set(seq, result.row);
    return runActionStep(session, seq, spec);
  }
  const rowId = session.recorded.get(seq)?.id ?? row?.id ?? '';
  if (result.kind !== 'not-here') return result;
  if (!result.lost)
    return {
      kind: 'pending',
      waitingFor: result.waitingFor,
      ...(result.stuckReason ? { stuckReason: result.stuckReason } : {}),
      running: false,
    };
  return settleLostClaim(
    session,
    { table: 'action_runs', rowId, sequence: seq, name, waitingFor: result.waitingFor },
    { journal: !result.rejected },
  );
}

const expiresAt = (now: Date, seconds: number | null) =>
  seconds === null ? null : new Date(now.getTime() + seconds * 1000);
