import type { Json } from '../../definitions/define-action.ts';
import { openActionStepStatuses } from '../../store/types.ts';
import type { ReplaySession } from '../replay/replay-session.ts';
import { runActionStep, type ActionStepResult, type ActionStepSpec } from './action-step.ts';
import { deliverCancel } from './deliver-cancel.ts';
import { settleLostClaim } from './settle-lost-claim.ts';

/**
 * A parallel block: its steps take consecutive sequences and run concurrently here. When a
 * duplicate replay holds some of them, the replay that finishes last sees every result on re-read
 * and carries on, so the run never parks with no one left to wake it; if that was us after our
 * block had been given up on elsewhere, it is journaled as `batch_finished_early`.
 */
export async function runParallelStep(
  session: ReplaySession,
  specs: Omit<ActionStepSpec, 'parallelBlock'>[],
): Promise<ActionStepResult[]> {
  const seqs = specs.map(() => session.nextSequence());
  const block = seqs[0] ?? 0;
  // A cancellation meets the block as a whole: delivered once, at its first sequence, and no branch runs.
  const first = session.recorded.get(block);
  if (first?.kind === 'cancel') return specs.map(() => ({ kind: 'cancelled' }));
  if (!first && session.cancelRequested && !session.cancellationDelivered) {
    await deliverCancel(session, block);
    return specs.map(() => ({ kind: 'cancelled' }));
  }
  // A planning replay (a cancel's or an expiry's rollback plan) claims nothing: a branch that is not over
  // yet is out for it, so the branches already done are what it plans with (review 20, ADR 0088).
  const over = (seq: number) => {
    const status = session.recorded.get(seq)?.status;
    return status !== undefined && !openActionStepStatuses.includes(status);
  };
  const results = await Promise.all(
    specs.map((spec, i) =>
      session.planOnly && !over(seqs[i] ?? 0)
        ? Promise.resolve<ActionStepResult>({ kind: 'pending', waitingFor: null, running: true })
        : runActionStep(session, seqs[i] ?? 0, { ...spec, parallelBlock: block }),
    ),
  );
  if (session.planOnly) return results;
  if (!results.some((r) => r.kind === 'pending' && r.running)) return results;

  // Our own outcomes must be durable before we look at the siblings: of two replays that split the
  // block, the one whose re-read comes last then sees every outcome.
  await session.tx(() => Promise.resolve());
  let finishedLate = false;
  const reread = await Promise.all(
    results.map(async (r, i): Promise<ActionStepResult> => {
      if (r.kind !== 'pending' || !r.running) return r;
      const seq = seqs[i] ?? 0;
      const row = session.recorded.get(seq);
      if (!row) return r;
      const now = await settleLostClaim(
        session,
        { table: 'action_runs', rowId: row.id, sequence: seq, name: row.name, waitingFor: null },
        { journal: false },
      );
      if (now.kind === 'pending') return { ...now };
      finishedLate = true;
      return now;
    }),
  );
  if (finishedLate && !reread.some((r) => r.kind === 'pending')) {
    await session.deps.journal({
      code: 'batch_finished_early',
      message: `parallel block at step ${block} finished here after another worker had left it; this worker carries the run on`,
      runId: session.runId,
      sequence: block,
      details: { steps: seqs },
    });
  }
  return reread;
}

export function outputsOf(results: ActionStepResult[]): Json[] {
  return results.map((r) => (r.kind === 'completed' ? r.output : null));
}
