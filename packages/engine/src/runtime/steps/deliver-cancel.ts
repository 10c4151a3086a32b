import { appendFlowEvent } from '../../store/append-flow-event.ts';
import { insertStep } from '../../store/insert-step.ts';
import { FlowError } from '../flow-error.ts';
import { ReplayConflict, type ReplaySession } from '../replay/replay-session.ts';

/** Records where the cancellation reached the flow's code, so every replay delivers it at the same point. */
export async function deliverCancel(session: ReplaySession, seq: number): Promise<void> {
  const reason = session.run.cancel_reason ?? 'cancelled';
  // Delivered once per replay, decided before any await: parallel branches must not each take it.
  session.cancellationDelivered = true;
  await session.tx(async (tx) => {
    const row = await insertStep(tx, {
      runId: session.runId,
      sequence: seq,
      kind: 'cancel',
      name: 'cancel',
      input: { reason },
      status: 'Completed',
      output: null,
    });
    // Another replay recorded something else here: its view is newer; this one stops quietly.
    if (row.kind !== 'cancel') throw new ReplayConflict();
    session.recorded.set(seq, row);
    if (row.inserted)
      await appendFlowEvent(tx, {
        runId: session.runId,
        type: 'run.cancel_delivered',
        sequence: seq,
        data: { reason },
      });
  });
}

export function cancelledError(session: ReplaySession, seq: number): FlowError {
  session.cancellationDelivered = true;
  session.cancellationRaised = true;
  const reason = session.run.cancel_reason ?? 'cancelled';
  return session.run.expired_at
    ? new FlowError('expired', `run expired: ${reason}`, null, seq)
    : new FlowError('cancelled', `run was cancelled: ${reason}`, null, seq);
}
