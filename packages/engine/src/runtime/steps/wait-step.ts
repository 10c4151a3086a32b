import type { Json } from '../../definitions/define-action.ts';
import { appendFlowEvent } from '../../store/append-flow-event.ts';
import { consumeSignal } from '../../store/consume-signal.ts';
import { enqueueJob } from '../../store/enqueue-job.ts';
import { insertStep } from '../../store/insert-step.ts';
import { fireTimer } from '../../store/fire-timer.ts';
import { insertTimer } from '../../store/insert-timer.ts';
import type { DbActionRun } from '../../store/list-action-runs.ts';
import { settleWaitStep } from '../../store/settle-wait-step.ts';
import type { ReplaySession } from '../replay/replay-session.ts';
import { checkHistory } from './check-history.ts';
import { deliverCancel } from './deliver-cancel.ts';

export type WaitResult =
  | { kind: 'completed'; output: Json }
  | { kind: 'errored'; error: Json }
  | { kind: 'cancelled' }
  | { kind: 'blocked' }
  | { kind: 'waiting'; waitingFor: string };

/**
 * A signal wait or a timer at `seq`. The first replay to reach it records a Waiting row and a wake
 * job for its deadline; later replays settle it (compare-and-swap from Waiting) when its signal is
 * there or its time has come. A cancellation that arrives while it waits settles it as Cancelled,
 * which is where the cancellation is delivered.
 */
export async function runWaitStep(
  session: ReplaySession,
  seq: number,
  spec: { kind: 'signal' | 'timer'; name: string; seconds: number },
): Promise<WaitResult> {
  const { deps } = session;
  const verdict = checkHistory(session, seq, spec.kind, spec.name);
  if (verdict.kind === 'blocked') return { kind: 'blocked' };
  if (verdict.kind === 'cancel-delivered') return { kind: 'cancelled' };
  if (verdict.kind === 'deliver-cancel') {
    await deliverCancel(session, seq);
    return { kind: 'cancelled' };
  }
  let row: DbActionRun;
  if (verdict.kind === 'recorded') {
    row = verdict.row;
  } else {
    const wakeAt = new Date(deps.clock.now().getTime() + spec.seconds * 1000);
    row = await session.tx(async (tx) => {
      const created = await insertStep(tx, {
        runId: session.runId,
        sequence: seq,
        kind: spec.kind,
        name: spec.name,
        input: { seconds: spec.seconds },
        status: 'Waiting',
        wakeAt,
      });
      // Another replay scheduled this wait first: its timer, wake and event already exist.
      if (!created.inserted) return created;
      if (spec.kind === 'timer') await insertTimer(tx, { runId: session.runId, sequence: seq, fireAt: wakeAt });
      await enqueueJob(tx, { kind: 'wake-run', runId: session.runId, availableAt: wakeAt });
      await appendFlowEvent(tx, {
        runId: session.runId,
        type: spec.kind === 'signal' ? 'signal.waiting' : 'timer.started',
        sequence: seq,
        rowId: created.id,
        data: { name: spec.name, until: wakeAt.toISOString() },
      });
      return created;
    });
    session.recorded.set(seq, row);
    if (row.kind !== spec.kind || row.name !== spec.name) return runWaitStep(session, seq, spec);
  }
  if (row.status === 'Completed')
    return { kind: 'completed', output: (row.output as { value: Json } | null)?.value ?? null };
  if (row.status === 'Cancelled') return { kind: 'cancelled' };
  if (row.status !== 'Waiting')
    return { kind: 'errored', error: { name: 'StepNotCompleted', message: `step ${seq} ended ${row.status}` } };

  const now = deps.clock.now();
  const due = row.wake_at !== null && row.wake_at.getTime() <= now.getTime();
  const id = row.id;
  const settled = await session
    .tx(async (tx) => {
      if (session.cancelRequested && !session.cancellationDelivered) {
        if (!(await settleWaitStep(tx, { id, status: 'Cancelled', now }))) throw new WaitRaced();
        await appendFlowEvent(tx, {
          runId: session.runId,
          type: 'run.cancel_delivered',
          sequence: seq,
          rowId: id,
          data: {},
        });
        return { cancelled: true } as const;
      }
      if (spec.kind === 'signal') {
        const signal = await consumeSignal(tx, { runId: session.runId, name: spec.name, sequence: seq, now });
        if (signal || due) {
          const value = signal ? signal.payload : null;
          if (!(await settleWaitStep(tx, { id, status: 'Completed', output: { value }, now }))) throw new WaitRaced();
          await appendFlowEvent(tx, {
            runId: session.runId,
            type: signal ? 'signal.received' : 'signal.timed_out',
            sequence: seq,
            rowId: id,
            data: { name: spec.name },
          });
          return { value };
        }
        return null;
      }
      if (!due) return null;
      if (!(await settleWaitStep(tx, { id, status: 'Completed', output: { value: null }, now }))) throw new WaitRaced();
      await fireTimer(tx, { runId: session.runId, sequence: seq, now });
      await appendFlowEvent(tx, {
        runId: session.runId,
        type: 'timer.fired',
        sequence: seq,
        rowId: id,
        data: { name: spec.name },
      });
      return { value: null };
    })
    .catch((err: unknown) => {
      if (err instanceof WaitRaced) return 'raced' as const;
      throw err;
    });
  if (settled === 'raced') {
    const fresh = await deps.prisma.actionRun.findUniqueOrThrow({ where: { id } });
    session.recorded.set(seq, fresh);
    return runWaitStep(session, seq, spec);
  }
  if (settled === null) {
    const until = row.wake_at?.toISOString() ?? 'ever';
    return {
      kind: 'waiting',
      waitingFor: spec.kind === 'signal' ? `signal "${spec.name}" until ${until}` : `timer until ${until}`,
    };
  }
  if ('cancelled' in settled) {
    session.cancellationDelivered = true;
    return { kind: 'cancelled' };
  }
  return { kind: 'completed', output: settled.value };
}

/** Another replay settled the wait first: thrown inside the transaction so a consumed signal rolls back with it. */
class WaitRaced extends Error {}
