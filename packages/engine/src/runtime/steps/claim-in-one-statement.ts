import { findStepAt, type NewStep } from '../../store/insert-step.ts';
import type { DbActionRun } from '../../store/list-action-runs.ts';
import type { StepEvent } from '../../store/step-event.ts';
import { transitionInBatch } from '../run-statement-batches.ts';
import { never, type ReplaySession } from '../replay/replay-session.ts';

/**
 * A new step's transition in one statement (ADR 0042): the buffered outcome of the step before, the
 * new row inserted already claimed, their events. `claimed`: the step is ours at attempt 1 (recorded
 * in the session). `raced`: the outcome was recorded (a fact: it passed its own fence) but another
 * replay had scheduled the step first; its row is read once and judged like any recorded step. Null:
 * the statement wrote nothing, and the caller's transaction path takes over.
 */
export async function claimInOneStatement(
  session: ReplaySession,
  insert: NewStep,
  args: { cancellationKnown: boolean; event: StepEvent; now: Date },
): Promise<{ kind: 'claimed' | 'raced'; row: DbActionRun } | null> {
  const { deps } = session;
  // A run not written yet (ADR 0048): the start writes this claim with the run, and this replay waits
  // here for the row it wrote, to go on as the pool's replay (ADR 0097), or ends here. Only a claim
  // that comes first: once the replay stopped (code that ran two things at once, one of which met a
  // refusing handle or claimed first), nothing more is handed over.
  if (session.firstStepProbe) {
    if (session.park) return never();
    const row = await session.firstStepProbe({ step: insert, started: args.event, claimedAt: args.now });
    if (row === null || session.park) return never();
    session.recorded.set(insert.sequence, row);
    return { kind: 'claimed', row };
  }
  const written = await session.oneStatement(async (fusable, outcome) => {
    const result = await transitionInBatch(fusable, {
      step: insert,
      workerId: deps.workerId,
      now: args.now,
      cancellationKnown: args.cancellationKnown,
      started: args.event,
      ...(outcome ? { outcome } : {}),
      epoch: session.historyEpoch,
    });
    if (!result.runOpen || (outcome && !result.recorded)) return null;
    if (result.row) return { kind: 'claimed' as const, row: result.row };
    // Nothing of ours was written when there was no outcome: the transaction path reads the other row.
    return outcome ? { kind: 'raced' as const, row: null } : null;
  });
  if (!written) return null;
  if (written.row) {
    session.recorded.set(insert.sequence, written.row);
    return { kind: 'claimed', row: written.row };
  }
  return { kind: 'raced', row: await findStepAt(deps.prisma, insert) };
}
